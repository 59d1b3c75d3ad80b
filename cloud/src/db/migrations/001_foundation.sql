-- Accounts and API tokens. A token's id is the JWT's jti; revoking sets revoked_at.
CREATE TABLE users (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  login text NOT NULL UNIQUE,
  password_hash text,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_tokens (
  id uuid PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name text NOT NULL,
  kind text NOT NULL DEFAULT 'api' CHECK (kind IN ('api', 'session')),
  scopes text[] NOT NULL,
  box_ids text[],
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz,
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX api_tokens_user ON api_tokens (user_id, created_at);

-- Secrets the instances of one deployment share (the JWT signing key when none is configured).
CREATE TABLE server_secrets (
  name text PRIMARY KEY,
  value text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Hives and boxes are registered the first time a device reports them.
CREATE TABLE hives (
  owner_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  hive_id text NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (owner_id, hive_id)
);

CREATE TABLE boxes (
  owner_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  box_id text NOT NULL,
  hive_id text,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (owner_id, box_id)
);

-- Time series, partitioned by month on the measurement time (partitions are created ahead by the service;
-- the default partition catches anything outside them).
CREATE TABLE metrics (
  owner_id bigint NOT NULL,
  hive_id text NOT NULL,
  ts timestamptz NOT NULL,
  temperature_celsius double precision,
  humidity_percent double precision,
  weight_kg double precision,
  received_at timestamptz NOT NULL DEFAULT now()
) PARTITION BY RANGE (ts);
CREATE TABLE metrics_default PARTITION OF metrics DEFAULT;
CREATE INDEX metrics_owner_hive_ts ON metrics (owner_id, hive_id, ts);

-- Unique keys on a partitioned table must contain the partition column, so idempotency keys live apart.
CREATE TABLE metric_dedupe (
  owner_id bigint NOT NULL,
  hive_id text NOT NULL,
  dedupe_key text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (owner_id, hive_id, dedupe_key)
);
CREATE INDEX metric_dedupe_created ON metric_dedupe (created_at);

CREATE TABLE movements (
  owner_id bigint NOT NULL,
  hive_id text NOT NULL,
  box_id text NOT NULL,
  ts timestamptz NOT NULL,
  bees_out double precision NOT NULL,
  bees_in double precision NOT NULL,
  net_flow double precision,
  avg_speed double precision,
  p95_speed double precision,
  stationary_bees integer,
  detected_bees integer,
  bee_interactions integer,
  received_at timestamptz NOT NULL DEFAULT now()
) PARTITION BY RANGE (ts);
CREATE TABLE movements_default PARTITION OF movements DEFAULT;
CREATE INDEX movements_owner_box_ts ON movements (owner_id, box_id, ts);
CREATE INDEX movements_owner_hive_ts ON movements (owner_id, hive_id, ts);

CREATE TABLE movement_dedupe (
  owner_id bigint NOT NULL,
  hive_id text NOT NULL,
  box_id text NOT NULL,
  ts timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (owner_id, hive_id, box_id, ts)
);
CREATE INDEX movement_dedupe_created ON movement_dedupe (created_at);
