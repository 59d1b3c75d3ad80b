import { lockForTransaction, type Queryable } from '../db/database.ts';

export type GateVideoState = 'UPLOADED' | 'PROCESSING' | 'READY' | 'FAILED';

export interface GateVideo {
  id: string;
  ownerId: number;
  boxId: string;
  state: GateVideoState;
  progress: number;
  failureReason: string | null;
  startTime: Date;
  endTime: Date | null;
  durationSeconds: number | null;
  width: number | null;
  height: number | null;
  sizeBytes: number;
  originalKey: string;
  detectionsKey: string | null;
  hasAudio: boolean;
  segmentCount: number | null;
  createdAt: Date;
  updatedAt: Date;
}

interface Row {
  id: number | string;
  owner_id: number;
  box_id: string;
  state: GateVideoState;
  progress: number;
  failure_reason: string | null;
  start_time: Date;
  duration_seconds: number | null;
  width: number | null;
  height: number | null;
  size_bytes: number;
  original_key: string;
  detections_key: string | null;
  has_audio: boolean;
  segment_count: number | null;
  created_at: Date;
  updated_at: Date;
}

function toVideo(row: Row): GateVideo {
  const startTime = new Date(row.start_time);
  return {
    id: String(row.id),
    ownerId: Number(row.owner_id),
    boxId: row.box_id,
    state: row.state,
    progress: Number(row.progress),
    failureReason: row.failure_reason,
    startTime,
    endTime: row.duration_seconds == null ? null : new Date(startTime.getTime() + Math.round(row.duration_seconds * 1000)),
    durationSeconds: row.duration_seconds,
    width: row.width,
    height: row.height,
    sizeBytes: Number(row.size_bytes),
    originalKey: row.original_key,
    detectionsKey: row.detections_key,
    hasAudio: row.has_audio,
    segmentCount: row.segment_count,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

export interface NewGateVideo {
  ownerId: number;
  boxId: string;
  startTime: Date;
  durationSeconds: number;
  width: number;
  height: number;
  hasAudio: boolean;
  sizeBytes: number;
  originalKey: string;
  detectionsKey: string | null;
  /** SHA-256 of the original, hex. */
  contentSha256: string;
}

/** Ids are numeric strings (clients send them as numbers inside [ID]); anything else names no video. */
export function isVideoId(id: string): boolean {
  return /^\d{1,18}$/.test(id);
}

/** Stored videos. Every read and write that a user can reach filters by owner. */
export class GateVideosRepository {
  constructor(private readonly db: Queryable) {}

  /** A fresh video id, taken before the row exists so that the files can be stored under it first. */
  async reserveId(): Promise<string> {
    const { rows } = await this.db.query<{ id: number | string }>(`SELECT nextval(pg_get_serial_sequence('gate_videos', 'id')) AS id`);
    return String(rows[0]!.id);
  }

  /** Inserts the row under a reserved id, with the keys its files were stored under. */
  async create(id: string, video: NewGateVideo, q: Queryable = this.db): Promise<GateVideo> {
    const { rows } = await q.query<Row>(
      `INSERT INTO gate_videos (id, owner_id, box_id, start_time, duration_seconds, width, height, has_audio, size_bytes, original_key, detections_key, content_sha256)
       OVERRIDING SYSTEM VALUE
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
       RETURNING *`,
      [id, video.ownerId, video.boxId, video.startTime, video.durationSeconds, video.width, video.height, video.hasAudio, video.sizeBytes, video.originalKey, video.detectionsKey, video.contentSha256],
    );
    return toVideo(rows[0]!);
  }

  /**
   * The box's clip with these bytes, if one was stored and did not fail (a failed one is worth a second try). Inside a
   * transaction it first takes a lock on those bytes, so two identical uploads at once make one clip.
   */
  async findSameContent(ownerId: number, boxId: string, contentSha256: string, q: Queryable = this.db): Promise<GateVideo | null> {
    await lockForTransaction(q, `gate video ${ownerId} ${boxId} ${contentSha256}`);
    const { rows } = await q.query<Row>(
      `SELECT * FROM gate_videos WHERE owner_id = $1 AND box_id = $2 AND content_sha256 = $3 AND state <> 'FAILED' ORDER BY id LIMIT 1`,
      [ownerId, boxId, contentSha256],
    );
    return rows[0] ? toVideo(rows[0]) : null;
  }

  /** For the transcode job, which acts for the owner recorded on the row. */
  async getAnyOwner(id: string): Promise<GateVideo | null> {
    if (!isVideoId(id)) return null;
    const { rows } = await this.db.query<Row>('SELECT * FROM gate_videos WHERE id = $1', [id]);
    return rows[0] ? toVideo(rows[0]) : null;
  }

  async get(ownerId: number, id: string): Promise<GateVideo | null> {
    if (!isVideoId(id)) return null;
    const { rows } = await this.db.query<Row>('SELECT * FROM gate_videos WHERE owner_id = $1 AND id = $2', [ownerId, id]);
    return rows[0] ? toVideo(rows[0]) : null;
  }

  /** A box's videos starting in [from, to), newest first; after `after` in that order when given. */
  async list(ownerId: number, boxId: string, range: { from?: Date; to?: Date; limit: number; after?: GateVideo }): Promise<GateVideo[]> {
    const { rows } = await this.db.query<Row>(
      `SELECT * FROM gate_videos
       WHERE owner_id = $1 AND box_id = $2 AND ($3::timestamptz IS NULL OR start_time >= $3) AND ($4::timestamptz IS NULL OR start_time < $4)
         AND ($6::timestamptz IS NULL OR (start_time, id) < ($6, $7::bigint))
       ORDER BY start_time DESC, id DESC LIMIT $5`,
      [ownerId, boxId, range.from ?? null, range.to ?? null, range.limit, range.after?.startTime ?? null, range.after?.id ?? null],
    );
    return rows.map(toVideo);
  }

  /** Videos of some boxes (all when boxIds is null), optionally only those still processing, newest first. */
  async streams(ownerId: number, boxIds: string[] | null, active: boolean | null, limit: number): Promise<GateVideo[]> {
    const { rows } = await this.db.query<Row>(
      `SELECT * FROM gate_videos
       WHERE owner_id = $1 AND ($2::text[] IS NULL OR box_id = ANY($2::text[]))
         AND ($3::boolean IS NULL OR (state IN ('UPLOADED', 'PROCESSING')) = $3)
       ORDER BY start_time DESC, id DESC LIMIT $4`,
      [ownerId, boxIds, active, limit],
    );
    return rows.map(toVideo);
  }

  /** The newest video of a box whose poster can serve as a still of the entrance. */
  async newestReady(ownerId: number, boxId: string): Promise<GateVideo | null> {
    const { rows } = await this.db.query<Row>(
      `SELECT * FROM gate_videos WHERE owner_id = $1 AND box_id = $2 AND state = 'READY' ORDER BY start_time DESC, id DESC LIMIT 1`,
      [ownerId, boxId],
    );
    return rows[0] ? toVideo(rows[0]) : null;
  }

  async markProcessing(id: string): Promise<void> {
    await this.db.query(`UPDATE gate_videos SET state = 'PROCESSING', progress = 0, failure_reason = NULL, updated_at = now() WHERE id = $1`, [id]);
  }

  async setProgress(id: string, percent: number): Promise<void> {
    await this.db.query(`UPDATE gate_videos SET progress = $2, updated_at = now() WHERE id = $1 AND state = 'PROCESSING'`, [id, percent]);
  }

  /** Removes the owner's video row; null when there is none (another owner's counts as none). */
  async delete(ownerId: number, id: string): Promise<GateVideo | null> {
    if (!isVideoId(id)) return null;
    const { rows } = await this.db.query<Row>('DELETE FROM gate_videos WHERE owner_id = $1 AND id = $2 RETURNING *', [ownerId, id]);
    return rows[0] ? toVideo(rows[0]) : null;
  }

  /** Which of these ids still have a row (any owner); ids that name no video are left out. */
  async existingIds(ids: readonly string[]): Promise<Set<string>> {
    const candidates = ids.filter(isVideoId);
    if (candidates.length === 0) return new Set();
    const { rows } = await this.db.query<{ id: string }>('SELECT id::text AS id FROM gate_videos WHERE id = ANY($1::bigint[])', [candidates]);
    return new Set(rows.map((row) => row.id));
  }

  /** False when the row is gone (deleted while it was being transcoded). */
  async markReady(id: string, result: { segmentCount: number; durationSeconds: number }): Promise<boolean> {
    const { rowCount } = await this.db.query(
      `UPDATE gate_videos SET state = 'READY', progress = 100, segment_count = $2, duration_seconds = $3, failure_reason = NULL, updated_at = now()
       WHERE id = $1`,
      [id, result.segmentCount, result.durationSeconds],
    );
    return (rowCount ?? 0) > 0;
  }

  async markFailed(id: string, reason: string): Promise<void> {
    await this.db.query(`UPDATE gate_videos SET state = 'FAILED', failure_reason = $2, updated_at = now() WHERE id = $1`, [id, reason]);
  }
}
