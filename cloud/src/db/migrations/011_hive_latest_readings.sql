-- The newest value of each sensor field of a hive, with the time it was taken: the apiary shows them for every hive
-- every 30 s. The newest metrics row alone hid a scale's weight whenever a climate sensor had posted after it.
-- Kept by the metrics ingest statement (newest by timestamp per field); reading_at is the newest reading of any field.
-- Retention forgets values older than RETENTION_DAYS here too (see db/partitions.ts).
CREATE TABLE hive_latest_readings (
  owner_id bigint NOT NULL,
  hive_id text NOT NULL,
  reading_at timestamptz NOT NULL,
  temperature_celsius double precision,
  temperature_celsius_at timestamptz,
  humidity_percent double precision,
  humidity_percent_at timestamptz,
  weight_kg double precision,
  weight_kg_at timestamptz,
  PRIMARY KEY (owner_id, hive_id)
);

-- Each hive's newest value of each field by the (owner, hive, time) index; of one second's values the first stored.
INSERT INTO hive_latest_readings (owner_id, hive_id, reading_at, temperature_celsius, temperature_celsius_at,
                                  humidity_percent, humidity_percent_at, weight_kg, weight_kg_at)
SELECT h.owner_id, h.hive_id, newest.ts, t.value, t.ts, u.value, u.ts, w.value, w.ts
FROM hives h
CROSS JOIN LATERAL (SELECT ts FROM metrics m WHERE m.owner_id = h.owner_id AND m.hive_id = h.hive_id ORDER BY ts DESC LIMIT 1) AS newest
LEFT JOIN LATERAL (
  SELECT temperature_celsius AS value, ts FROM metrics m
  WHERE m.owner_id = h.owner_id AND m.hive_id = h.hive_id AND temperature_celsius IS NOT NULL ORDER BY ts DESC, received_at LIMIT 1
) AS t ON true
LEFT JOIN LATERAL (
  SELECT humidity_percent AS value, ts FROM metrics m
  WHERE m.owner_id = h.owner_id AND m.hive_id = h.hive_id AND humidity_percent IS NOT NULL ORDER BY ts DESC, received_at LIMIT 1
) AS u ON true
LEFT JOIN LATERAL (
  SELECT weight_kg AS value, ts FROM metrics m
  WHERE m.owner_id = h.owner_id AND m.hive_id = h.hive_id AND weight_kg IS NOT NULL ORDER BY ts DESC, received_at LIMIT 1
) AS w ON true;
