-- Durable background jobs (transcodes, heatmap renders, …) shared by every instance of the service.
-- A worker claims a due job with FOR UPDATE SKIP LOCKED and holds it by a lease (locked_until) that its heartbeat
-- renews; a job whose lease ran out belongs to a worker that died and is claimed again.
CREATE TABLE jobs (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind text NOT NULL,
  payload jsonb NOT NULL DEFAULT '{}',
  state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'done', 'failed')),
  -- Jobs doing the same work share a key: while one waits, enqueuing another with that key adds nothing.
  dedupe_key text,
  attempts integer NOT NULL DEFAULT 0,
  max_attempts integer NOT NULL CHECK (max_attempts >= 1),
  run_at timestamptz NOT NULL DEFAULT now(),
  locked_by text,
  locked_until timestamptz,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE INDEX jobs_due ON jobs (run_at, id) WHERE state = 'queued';
CREATE INDEX jobs_leased ON jobs (locked_until) WHERE state = 'running';
CREATE INDEX jobs_finished ON jobs (finished_at) WHERE state IN ('done', 'failed');
CREATE UNIQUE INDEX jobs_waiting_dedupe ON jobs (kind, dedupe_key) WHERE state = 'queued' AND dedupe_key IS NOT NULL;

-- Stored entrance videos: the original upload and its HLS rendition live under videos/{id}/ in the blob store.
CREATE TABLE gate_videos (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  owner_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  box_id text NOT NULL,
  state text NOT NULL DEFAULT 'UPLOADED' CHECK (state IN ('UPLOADED', 'PROCESSING', 'READY', 'FAILED')),
  progress real NOT NULL DEFAULT 0,
  failure_reason text,
  start_time timestamptz NOT NULL,
  duration_seconds double precision,
  width integer,
  height integer,
  size_bytes bigint NOT NULL,
  original_key text NOT NULL,
  detections_key text,
  has_audio boolean NOT NULL DEFAULT false,
  segment_count integer,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX gate_videos_owner_box_start ON gate_videos (owner_id, box_id, start_time DESC);

-- Daily entrance heatmaps: one row per (owner, box, UTC date) holding the whole count grid as a dense array.
-- An upload adds its deltas in one statement under the row lock (heatmap_add below), so concurrent uploads, from
-- any number of instances, never lose counts. Measured here for a 20k-point upload touching 11k cells: a row per
-- cell (INSERT … ON CONFLICT DO UPDATE count = count + delta) ~7 µs per touched cell, ~100 ms; the whole array
-- rebuilt with unnest/array_agg ~15 ms whatever is touched; this sparse loop ~4 ms, and less for small uploads.
CREATE FUNCTION heatmap_add(INOUT counts bigint[], cells integer[], deltas bigint[], OUT max_touched bigint)
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  i integer;
  cell integer;
BEGIN
  max_touched := 0;
  FOR i IN 1 .. coalesce(array_length(cells, 1), 0) LOOP
    -- 0-based cell index; an index past the end would grow the array and fail the cardinality check.
    cell := cells[i] + 1;
    counts[cell] := counts[cell] + deltas[i];
    IF counts[cell] > max_touched THEN
      max_touched := counts[cell];
    END IF;
  END LOOP;
END
$$;

CREATE TABLE heatmap_days (
  id bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  owner_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  box_id text NOT NULL,
  day date NOT NULL,
  -- The grid is fixed by the day's first upload, so a change of configuration never mixes resolutions in a day.
  cols integer NOT NULL,
  rows integer NOT NULL,
  counts bigint[] NOT NULL CHECK (cardinality(counts) = cols * rows),
  frame_width integer NOT NULL,
  frame_height integer NOT NULL,
  trajectory_count bigint NOT NULL DEFAULT 0,
  point_count bigint NOT NULL DEFAULT 0,
  max_count bigint NOT NULL DEFAULT 0,
  last_sample_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  image_key text,
  image_width integer,
  image_height integer,
  rendered_at timestamptz,
  render_count integer NOT NULL DEFAULT 0,
  PRIMARY KEY (owner_id, box_id, day)
);
CREATE INDEX heatmap_days_owner_day ON heatmap_days (owner_id, day DESC);

-- Batch ids already counted, so a device retrying an upload adds it once.
CREATE TABLE heatmap_batches (
  owner_id bigint NOT NULL,
  box_id text NOT NULL,
  batch_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (owner_id, box_id, batch_id)
);
CREATE INDEX heatmap_batches_created ON heatmap_batches (created_at);
