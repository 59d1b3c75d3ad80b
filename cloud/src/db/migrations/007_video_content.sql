-- The SHA-256 of an uploaded original: a camera that retries an upload whose answer it never got (the clip was
-- stored) sends the same bytes again, which must not make a second clip.
ALTER TABLE gate_videos ADD COLUMN content_sha256 text;
CREATE INDEX gate_videos_content ON gate_videos (owner_id, box_id, content_sha256) WHERE content_sha256 IS NOT NULL;
