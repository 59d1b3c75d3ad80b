import type { LiveRelayProtocol, LiveSessionStatus } from '@hivegate/shared';
import type { Queryable } from '../db/database.ts';

export interface SessionRecord {
  id: string;
  ownerId: number;
  boxId: string;
  status: LiveSessionStatus;
  relayProtocol: LiveRelayProtocol;
  /** The browser asked for this relay; otherwise the gateway chooses (and may change) it for the device. */
  relayProtocolExplicit: boolean;
  qualityProfile: string;
  recordingMode: string;
  clipHandoffEnabled: boolean;
  handoffStreamId: string | null;
  publishSalt: string;
  publishTokenHash: Buffer;
  keepaliveDeadline: Date;
  lastKeepaliveAt: Date | null;
  lastErrorCode: string | null;
  lastErrorMessage: string | null;
  createdAt: Date;
  updatedAt: Date;
  activeAt: Date | null;
  stoppingAt: Date | null;
  endedAt: Date | null;
  firstPlaylistAt: Date | null;
  /** JPEG frames accepted so far (http-jpeg-push); the latest is live/{id}/latest.jpg. */
  frameSequence: number;
  firstFrameAt: Date | null;
  lastFrameAt: Date | null;
  segments: string[];
  mediaReleasedAt: Date | null;
  /** From the device's presence record. */
  lastDeviceSeenAt: Date | null;
  /** Whether this session's START_STREAM has reached the device. */
  startDelivered: boolean;
  /** The note of the device's latest START_STREAM acknowledgement (a profile it replaced…), null when it wrote none. */
  deviceNotice: string | null;
}

const COLUMNS = `s.id, s.owner_id AS "ownerId", s.box_id AS "boxId", s.status, s.relay_protocol AS "relayProtocol", s.relay_protocol_explicit AS "relayProtocolExplicit",
  s.quality_profile AS "qualityProfile", s.recording_mode AS "recordingMode", s.clip_handoff_enabled AS "clipHandoffEnabled",
  s.handoff_stream_id AS "handoffStreamId", s.publish_salt AS "publishSalt", s.publish_token_hash AS "publishTokenHash",
  s.keepalive_deadline AS "keepaliveDeadline", s.last_keepalive_at AS "lastKeepaliveAt", s.last_error_code AS "lastErrorCode",
  s.last_error_message AS "lastErrorMessage", s.created_at AS "createdAt", s.updated_at AS "updatedAt", s.active_at AS "activeAt",
  s.stopping_at AS "stoppingAt", s.ended_at AS "endedAt", s.first_playlist_at AS "firstPlaylistAt", s.segments,
  s.frame_sequence AS "frameSequence", s.first_frame_at AS "firstFrameAt", s.last_frame_at AS "lastFrameAt",
  s.media_released_at AS "mediaReleasedAt", d.last_seen_at AS "lastDeviceSeenAt",
  EXISTS (SELECT 1 FROM live_commands c WHERE c.session_id = s.id AND c.command_type = 'START_STREAM' AND c.delivered_at IS NOT NULL) AS "startDelivered",
  (SELECT left(NULLIF(c.ack_payload->>'note', ''), 500) FROM live_commands c
   WHERE c.session_id = s.id AND c.command_type = 'START_STREAM' AND c.acked_at IS NOT NULL ORDER BY c.acked_at DESC LIMIT 1) AS "deviceNotice"`;
const FROM = `FROM live_sessions s LEFT JOIN live_devices d ON d.owner_id = s.owner_id AND d.box_id = s.box_id`;
const OPEN = `('REQUESTED', 'DEVICE_OFFLINE', 'STARTING', 'ACTIVE')`;

/** A UUID as Postgres accepts it; anything else cannot name a session (and must not reach a uuid column). */
export function isUuid(value: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}

export interface NewSession {
  id: string;
  ownerId: number;
  boxId: string;
  status: LiveSessionStatus;
  relayProtocol: LiveRelayProtocol;
  relayProtocolExplicit: boolean;
  qualityProfile: string;
  recordingMode: string;
  clipHandoffEnabled: boolean;
  publishSalt: string;
  publishTokenHash: Buffer;
}

export interface SessionChange {
  status: LiveSessionStatus;
  extendKeepaliveSeconds?: number;
  error?: { code: string; message: string | null };
}

/** Live sessions. Reads and writes for users filter by owner; the publisher and the sweeps go by session id. */
export class LiveSessionsRepository {
  constructor(private readonly db: Queryable) {}

  async findForOwner(ownerId: number, id: string, db: Queryable = this.db, lock = false): Promise<SessionRecord | undefined> {
    if (!isUuid(id)) return undefined;
    const { rows } = await db.query<SessionRecord>(`SELECT ${COLUMNS} ${FROM} WHERE s.id = $1 AND s.owner_id = $2${lock ? ' FOR UPDATE OF s' : ''}`, [id, ownerId]);
    return rows[0];
  }

  /** For the publisher, whose publish token (not an owner) says who it is. */
  async findById(id: string, db: Queryable = this.db): Promise<SessionRecord | undefined> {
    if (!isUuid(id)) return undefined;
    const { rows } = await db.query<SessionRecord>(`SELECT ${COLUMNS} ${FROM} WHERE s.id = $1`, [id]);
    return rows[0];
  }

  /** The session holding the box's open slot. */
  async openForBox(ownerId: number, boxId: string, db: Queryable = this.db): Promise<SessionRecord | undefined> {
    const { rows } = await db.query<SessionRecord>(`SELECT ${COLUMNS} ${FROM} WHERE s.owner_id = $1 AND s.box_id = $2 AND s.status IN ${OPEN}`, [ownerId, boxId]);
    return rows[0];
  }

  /** The newest session of the box that is not over (an open one, or one still stopping). */
  async currentForBox(ownerId: number, boxId: string, db: Queryable = this.db, lock = false): Promise<SessionRecord | undefined> {
    const { rows } = await db.query<SessionRecord>(
      `SELECT ${COLUMNS} ${FROM} WHERE s.owner_id = $1 AND s.box_id = $2 AND s.ended_at IS NULL ORDER BY s.created_at DESC LIMIT 1${lock ? ' FOR UPDATE OF s' : ''}`,
      [ownerId, boxId],
    );
    return rows[0];
  }

  /** Inserts unless the box already has an open session (then undefined: read that one instead). */
  async insert(db: Queryable, session: NewSession): Promise<boolean> {
    const { rowCount } = await db.query(
      `INSERT INTO live_sessions (id, owner_id, box_id, status, relay_protocol, quality_profile, recording_mode, clip_handoff_enabled,
                                  publish_salt, publish_token_hash, keepalive_deadline, relay_protocol_explicit)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now(), $11)
       ON CONFLICT (owner_id, box_id) WHERE status IN ${OPEN} DO NOTHING`,
      [session.id, session.ownerId, session.boxId, session.status, session.relayProtocol, session.qualityProfile, session.recordingMode, session.clipHandoffEnabled, session.publishSalt, session.publishTokenHash, session.relayProtocolExplicit],
    );
    return rowCount === 1;
  }

  /** Writes a transition's outcome; the timestamps of the state it enters are set once. */
  async applyChange(db: Queryable, id: string, change: SessionChange): Promise<void> {
    await db.query(
      `UPDATE live_sessions SET
         status = $2,
         updated_at = now(),
         last_keepalive_at = CASE WHEN $3::double precision IS NULL THEN last_keepalive_at ELSE now() END,
         keepalive_deadline = CASE WHEN $3::double precision IS NULL THEN keepalive_deadline ELSE now() + make_interval(secs => $3::double precision) END,
         last_error_code = CASE WHEN $4::boolean THEN $5 ELSE last_error_code END,
         last_error_message = CASE WHEN $4::boolean THEN $6 ELSE last_error_message END,
         active_at = CASE WHEN $2 = 'ACTIVE' THEN COALESCE(active_at, now()) ELSE active_at END,
         stopping_at = CASE WHEN $2 = 'STOPPING' THEN COALESCE(stopping_at, now()) ELSE stopping_at END,
         ended_at = CASE WHEN $2 IN ('STOPPED', 'FAILED', 'EXPIRED') THEN COALESCE(ended_at, now()) ELSE ended_at END
       WHERE id = $1`,
      [id, change.status, change.extendKeepaliveSeconds ?? null, change.error !== undefined, change.error?.code ?? null, change.error?.message ?? null],
    );
  }

  /** Open sessions nobody kept alive in time, locked for this transaction; rows other instances hold are skipped. */
  async lockExpired(db: Queryable, limit: number): Promise<SessionRecord[]> {
    const { rows } = await db.query<SessionRecord>(
      `SELECT ${COLUMNS} ${FROM} WHERE s.status IN ${OPEN} AND s.keepalive_deadline <= now()
       ORDER BY s.keepalive_deadline LIMIT $1 FOR UPDATE OF s SKIP LOCKED`,
      [limit],
    );
    return rows;
  }

  /** ACTIVE sessions with no playlist or frame (nor the move to ACTIVE itself) for `silenceSeconds`, locked. */
  async lockPublisherSilent(db: Queryable, silenceSeconds: number, limit: number): Promise<SessionRecord[]> {
    const { rows } = await db.query<SessionRecord>(
      `SELECT ${COLUMNS} ${FROM} WHERE s.status = 'ACTIVE'
         AND GREATEST(s.last_playlist_at, s.last_frame_at, s.active_at) <= now() - make_interval(secs => $1::double precision)
       ORDER BY s.active_at LIMIT $2 FOR UPDATE OF s SKIP LOCKED`,
      [silenceSeconds, limit],
    );
    return rows;
  }

  /** STARTING and ACTIVE sessions whose device has not been seen for `onlineSeconds` (it is offline), locked. */
  async lockDeviceGone(db: Queryable, onlineSeconds: number, limit: number): Promise<SessionRecord[]> {
    const { rows } = await db.query<SessionRecord>(
      `SELECT ${COLUMNS} ${FROM} WHERE s.status IN ('STARTING', 'ACTIVE')
         AND (d.last_seen_at IS NULL OR d.last_seen_at <= now() - make_interval(secs => $1::double precision))
       ORDER BY s.created_at LIMIT $2 FOR UPDATE OF s SKIP LOCKED`,
      [onlineSeconds, limit],
    );
    return rows;
  }

  /**
   * STARTING sessions whose latest START_STREAM reached the device (acknowledged, or at least handed out) more than
   * `timeoutSeconds` ago, locked. A relay fallback queues a new START_STREAM, which starts the clock again.
   */
  async lockStartTimedOut(db: Queryable, timeoutSeconds: number, limit: number): Promise<SessionRecord[]> {
    const { rows } = await db.query<SessionRecord>(
      `SELECT ${COLUMNS} ${FROM} WHERE s.status = 'STARTING'
         AND (SELECT max(COALESCE(c.acked_at, c.delivered_at)) FROM live_commands c
              WHERE c.session_id = s.id AND c.command_type = 'START_STREAM' AND c.cancelled_at IS NULL) <= now() - make_interval(secs => $1::double precision)
       ORDER BY s.created_at LIMIT $2 FOR UPDATE OF s SKIP LOCKED`,
      [timeoutSeconds, limit],
    );
    return rows;
  }

  /**
   * The box's ACTIVE sessions whose START_STREAM reached the device more than `graceSeconds` ago and whose media has
   * been silent for `silenceSeconds`.
   */
  async activeAndSilent(ownerId: number, boxId: string, graceSeconds: number, silenceSeconds: number): Promise<string[]> {
    const { rows } = await this.db.query<{ id: string }>(
      `SELECT s.id FROM live_sessions s WHERE s.owner_id = $1 AND s.box_id = $2 AND s.status = 'ACTIVE'
         AND GREATEST(s.last_playlist_at, s.last_frame_at, s.active_at) <= now() - make_interval(secs => $4::double precision)
         AND (SELECT max(COALESCE(c.acked_at, c.delivered_at)) FROM live_commands c
              WHERE c.session_id = s.id AND c.command_type = 'START_STREAM' AND c.cancelled_at IS NULL) <= now() - make_interval(secs => $3::double precision)`,
      [ownerId, boxId, graceSeconds, silenceSeconds],
    );
    return rows.map((r) => r.id);
  }

  async lockStopGraceElapsed(db: Queryable, graceSeconds: number, limit: number): Promise<SessionRecord[]> {
    const { rows } = await db.query<SessionRecord>(
      `SELECT ${COLUMNS} ${FROM} WHERE s.status = 'STOPPING' AND s.stopping_at <= now() - make_interval(secs => $1::double precision)
       ORDER BY s.stopping_at LIMIT $2 FOR UPDATE OF s SKIP LOCKED`,
      [graceSeconds, limit],
    );
    return rows;
  }

  /**
   * Claims ended sessions whose media is still stored. A claim older than `reclaimAfterSeconds` (an instance died
   * half-way) can be taken again; releasing twice is harmless.
   */
  async claimMediaToRelease(limit: number, reclaimAfterSeconds: number): Promise<SessionRecord[]> {
    const { rows } = await this.db.query<{ id: string }>(
      `UPDATE live_sessions SET media_release_claimed_at = now()
       WHERE id IN (
         SELECT id FROM live_sessions
         WHERE ended_at IS NOT NULL AND media_released_at IS NULL
           AND (media_release_claimed_at IS NULL OR media_release_claimed_at < now() - make_interval(secs => $2::double precision))
         ORDER BY ended_at LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING id`,
      [limit, reclaimAfterSeconds],
    );
    const claimed: SessionRecord[] = [];
    for (const { id } of rows) {
      const session = await this.findById(id);
      if (session) claimed.push(session);
    }
    return claimed;
  }

  /** Deletes up to `limit` sessions that ended before `cutoff` and whose media is gone; their commands go with them. */
  async deleteEndedBefore(cutoff: Date, limit: number): Promise<number> {
    const { rowCount } = await this.db.query(
      `DELETE FROM live_sessions WHERE id IN (
         SELECT id FROM live_sessions WHERE ended_at < $1 AND media_released_at IS NOT NULL
         ORDER BY ended_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
      [cutoff.toISOString(), limit],
    );
    return rowCount;
  }

  async markMediaReleased(id: string, handoffStreamId: string | null): Promise<void> {
    await this.db.query(
      `UPDATE live_sessions SET media_released_at = now(), segments = '{}', handoff_stream_id = COALESCE($2, handoff_stream_id) WHERE id = $1`,
      [id, handoffStreamId],
    );
  }

  /**
   * Records a stored segment (moved to the end if sent again) unless the session ended meanwhile (then the caller
   * deletes what it just stored). Beyond `cap` media segments, the oldest are returned for the caller to drop.
   */
  async addSegment(id: string, name: string, cap: number): Promise<{ outcome: 'added' | 'ended'; overflow: string[] }> {
    const { rows } = await this.db.query<{ segments: string[] }>(
      `UPDATE live_sessions SET segments = array_append(array_remove(segments, $2), $2) WHERE id = $1 AND ended_at IS NULL RETURNING segments`,
      [id, name],
    );
    if (!rows[0]) return { outcome: 'ended', overflow: [] };
    const media = rows[0].segments.filter((n) => !n.endsWith('.mp4'));
    return { outcome: 'added', overflow: media.length > cap ? media.slice(0, media.length - cap) : [] };
  }

  async removeSegments(id: string, names: string[]): Promise<void> {
    if (names.length === 0) return;
    await this.db.query(
      `UPDATE live_sessions SET segments = ARRAY(SELECT x FROM unnest(segments) WITH ORDINALITY AS t(x, n) WHERE x <> ALL($2::text[]) ORDER BY n) WHERE id = $1`,
      [id, names],
    );
  }

  async storedSegments(id: string): Promise<string[]> {
    const { rows } = await this.db.query<{ segments: string[] }>(`SELECT segments FROM live_sessions WHERE id = $1`, [id]);
    return rows[0]?.segments ?? [];
  }

  /** Position of the stored playlist (see playlist_position); the caller holds the row lock. */
  async playlistPosition(db: Queryable, id: string): Promise<number> {
    const { rows } = await db.query<{ position: number }>(`SELECT playlist_position AS position FROM live_sessions WHERE id = $1`, [id]);
    return rows[0]?.position ?? -1;
  }

  /** A stored playlist; `playable` (it lists a segment) sets first_playlist_at once, which makes the session playable. */
  async recordPlaylist(db: Queryable, id: string, position: number, playable: boolean): Promise<void> {
    await db.query(
      `UPDATE live_sessions SET playlist_position = $2, last_playlist_at = now(),
              first_playlist_at = CASE WHEN $3::boolean THEN COALESCE(first_playlist_at, now()) ELSE first_playlist_at END
       WHERE id = $1`,
      [id, position, playable],
    );
  }

  /** The quality profile the device says it streams (it may replace one it does not know); the caller holds the row lock. */
  async setQualityProfile(db: Queryable, id: string, qualityProfile: string): Promise<void> {
    await db.query(`UPDATE live_sessions SET quality_profile = $2, updated_at = now() WHERE id = $1`, [id, qualityProfile]);
  }

  /** The gateway's (re)choice of relay for a session the browser left it to; the caller holds the row lock. */
  async setRelayProtocol(db: Queryable, id: string, relay: LiveRelayProtocol, clipHandoffEnabled: boolean): Promise<void> {
    await db.query(`UPDATE live_sessions SET relay_protocol = $2, clip_handoff_enabled = $3, updated_at = now() WHERE id = $1`, [id, relay, clipHandoffEnabled]);
  }

  /**
   * Counts an accepted JPEG frame unless the session ended meanwhile (then undefined: the caller deletes what it
   * stored). No row lock: frames come several times a second and only the first one moves the session.
   */
  async recordFrame(id: string): Promise<{ sequence: number; receivedAt: Date; status: LiveSessionStatus } | undefined> {
    const { rows } = await this.db.query<{ sequence: number; receivedAt: Date; status: LiveSessionStatus }>(
      `UPDATE live_sessions SET frame_sequence = frame_sequence + 1, last_frame_at = now(), first_frame_at = COALESCE(first_frame_at, now())
       WHERE id = $1 AND ended_at IS NULL
       RETURNING frame_sequence AS "sequence", last_frame_at AS "receivedAt", status`,
      [id],
    );
    return rows[0];
  }

  /** Frame position and state of sessions watched on this instance (one query for all of them). */
  async frameStates(ids: string[]): Promise<{ id: string; frameSequence: number; lastFrameAt: Date | null; ended: boolean }[]> {
    const valid = ids.filter(isUuid);
    if (valid.length === 0) return [];
    const { rows } = await this.db.query<{ id: string; frameSequence: number; lastFrameAt: Date | null; ended: boolean }>(
      `SELECT id, frame_sequence AS "frameSequence", last_frame_at AS "lastFrameAt", ended_at IS NOT NULL AS ended FROM live_sessions WHERE id = ANY($1::uuid[])`,
      [valid],
    );
    return rows;
  }
}
