-- Ended live sessions are deleted after a while (their commands cascade); this finds them without a scan.
CREATE INDEX live_sessions_ended ON live_sessions (ended_at) WHERE media_released_at IS NOT NULL;
