-- Live gateway: device presence and status, live sessions, and the commands devices fetch by polling.

-- The latest status an entrance observer reported for a box, and when it was last heard from.
CREATE TABLE live_devices (
  owner_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  box_id text NOT NULL,
  device_id text,
  app_version text,
  camera_status jsonb,
  publisher_state jsonb,
  last_error_code text,
  last_error_message text,
  diagnostics jsonb,
  last_seen_at timestamptz NOT NULL,
  status_updated_at timestamptz NOT NULL,
  PRIMARY KEY (owner_id, box_id)
);

CREATE TABLE live_sessions (
  id uuid PRIMARY KEY,
  owner_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  box_id text NOT NULL,
  status text NOT NULL CHECK (status IN ('REQUESTED', 'DEVICE_OFFLINE', 'STARTING', 'ACTIVE', 'STOPPING', 'STOPPED', 'FAILED', 'EXPIRED')),
  relay_protocol text NOT NULL,
  quality_profile text NOT NULL,
  recording_mode text NOT NULL,
  clip_handoff_enabled boolean NOT NULL,
  handoff_stream_id text,
  -- The publish token is an HMAC of (session, salt) under the deployment secret: only its hash is stored,
  -- and the gateway can re-derive it to redeliver START_STREAM.
  publish_salt text NOT NULL,
  publish_token_hash bytea NOT NULL,
  keepalive_deadline timestamptz NOT NULL,
  last_keepalive_at timestamptz,
  last_error_code text,
  last_error_message text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  active_at timestamptz,
  stopping_at timestamptz,
  ended_at timestamptz,
  first_playlist_at timestamptz,
  last_playlist_at timestamptz,
  -- Media sequence + segment count of the stored playlist: an older playlist arriving late is not stored over it.
  playlist_position bigint NOT NULL DEFAULT -1,
  -- Segment files stored under live/{id}/, in arrival order (the sliding window, or the whole clip when kept).
  segments text[] NOT NULL DEFAULT '{}',
  media_release_claimed_at timestamptz,
  media_released_at timestamptz
);
-- One open session per box: a second start finds it instead of racing a duplicate in.
CREATE UNIQUE INDEX live_sessions_open_per_box ON live_sessions (owner_id, box_id)
  WHERE status IN ('REQUESTED', 'DEVICE_OFFLINE', 'STARTING', 'ACTIVE');
CREATE INDEX live_sessions_owner_box ON live_sessions (owner_id, box_id, created_at DESC);
CREATE INDEX live_sessions_keepalive ON live_sessions (keepalive_deadline)
  WHERE status IN ('REQUESTED', 'DEVICE_OFFLINE', 'STARTING', 'ACTIVE');
CREATE INDEX live_sessions_stopping ON live_sessions (stopping_at) WHERE status = 'STOPPING';
CREATE INDEX live_sessions_media_to_release ON live_sessions (ended_at)
  WHERE ended_at IS NOT NULL AND media_released_at IS NULL;

CREATE TABLE live_commands (
  id uuid PRIMARY KEY,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  owner_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  box_id text NOT NULL,
  session_id uuid NOT NULL REFERENCES live_sessions (id) ON DELETE CASCADE,
  command_type text NOT NULL CHECK (command_type IN ('START_STREAM', 'STOP_STREAM')),
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  delivered_at timestamptz,
  last_delivered_at timestamptz,
  delivery_count integer NOT NULL DEFAULT 0,
  acked_at timestamptz,
  ack_status text,
  ack_payload jsonb,
  cancelled_at timestamptz
);
-- What a poll looks for: the box's commands neither acknowledged nor withdrawn, oldest first.
CREATE INDEX live_commands_pending ON live_commands (owner_id, box_id, seq) WHERE acked_at IS NULL AND cancelled_at IS NULL;
CREATE INDEX live_commands_session ON live_commands (session_id);
