-- Second live relay (http-jpeg-push) beside HLS: how a session's relay was chosen, its frame counter, and the
-- relays a device said it cannot publish with.

-- true when the browser asked for the relay; otherwise the gateway may pick another one for the device.
ALTER TABLE live_sessions ADD COLUMN relay_protocol_explicit boolean NOT NULL DEFAULT false;
-- JPEG frames accepted so far (the latest one is live/{id}/latest.jpg); viewers on every instance follow it.
ALTER TABLE live_sessions ADD COLUMN frame_sequence bigint NOT NULL DEFAULT 0;
ALTER TABLE live_sessions ADD COLUMN first_frame_at timestamptz;
ALTER TABLE live_sessions ADD COLUMN last_frame_at timestamptz;

-- Relays the device reported it cannot publish with (STREAM_FAILED UNSUPPORTED_RELAY_PROTOCOL); forgotten when
-- the device reports another appVersion, since an update may have added them.
ALTER TABLE live_devices ADD COLUMN refused_relays text[] NOT NULL DEFAULT '{}';
