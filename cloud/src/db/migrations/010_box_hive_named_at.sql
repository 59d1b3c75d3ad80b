-- A box belongs to the hive its newest movement record names. The box's first hive was kept for good: a box moved to
-- another hive stayed in the first one. hive_named_at is the time of the record that named hive_id, so that a record
-- arriving late for an earlier time does not move the box back. Of records of the same second naming two hives, the
-- greater hive id wins, so that the outcome does not hang on which arrived first.
ALTER TABLE boxes ADD COLUMN hive_named_at timestamptz;

-- A box whose records retention has all dropped keeps the hive it had, with no time: the next record names its hive.
UPDATE boxes b SET (hive_id, hive_named_at) = (
  SELECT m.hive_id, m.ts FROM movements m WHERE m.owner_id = b.owner_id AND m.box_id = b.box_id
  ORDER BY m.ts DESC, m.hive_id DESC LIMIT 1
)
WHERE EXISTS (SELECT 1 FROM movements m WHERE m.owner_id = b.owner_id AND m.box_id = b.box_id);
