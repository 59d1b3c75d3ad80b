import { randomUUID } from 'node:crypto';
import type { LiveCommandType } from '@hivegate/shared';
import type { Queryable } from '../db/database.ts';
import { isUuid } from './sessions-repository.ts';

export interface CommandRecord {
  id: string;
  seq: number;
  sessionId: string;
  commandType: LiveCommandType;
  payload: Record<string, unknown>;
  createdAt: Date;
  deliveredAt: Date | null;
  ackedAt: Date | null;
  /** The session's publish salt, to re-derive the publish token for START_STREAM. */
  publishSalt: string;
}

export interface AckableCommand {
  id: string;
  sessionId: string;
  commandType: LiveCommandType;
  /** As queued (START_STREAM: the relay it offers). */
  payload: Record<string, unknown>;
  ackedAt: Date | null;
}

/**
 * START_STREAM / STOP_STREAM commands waiting for a box's device. Delivery is at-least-once: a command is handed
 * out again (after a pause, so a device that never acknowledges does not spin) until the device acknowledges it or
 * the gateway withdraws it.
 */
export class LiveCommandsRepository {
  constructor(private readonly db: Queryable) {}

  async queue(db: Queryable, command: { ownerId: number; boxId: string; sessionId: string; commandType: LiveCommandType; payload: Record<string, unknown> }): Promise<string> {
    const id = randomUUID();
    await db.query(
      `INSERT INTO live_commands (id, owner_id, box_id, session_id, command_type, payload) VALUES ($1, $2, $3, $4, $5, $6::jsonb)`,
      [id, command.ownerId, command.boxId, command.sessionId, command.commandType, JSON.stringify(command.payload)],
    );
    return id;
  }

  /** Withdraws the session's unacknowledged START_STREAM. */
  async cancelStart(db: Queryable, sessionId: string): Promise<void> {
    await db.query(
      `UPDATE live_commands SET cancelled_at = now() WHERE session_id = $1 AND command_type = 'START_STREAM' AND acked_at IS NULL AND cancelled_at IS NULL`,
      [sessionId],
    );
  }

  /**
   * Withdraws commands still waiting for a device whose session ended before `endedBefore`: a device that comes
   * back after days has nothing to stop (its uploads to the ended session are refused anyway).
   */
  async withdrawForEndedSessions(endedBefore: Date): Promise<number> {
    const { rowCount } = await this.db.query(
      `UPDATE live_commands c SET cancelled_at = now()
       FROM live_sessions s
       WHERE c.session_id = s.id AND c.acked_at IS NULL AND c.cancelled_at IS NULL AND s.ended_at < $1`,
      [endedBefore.toISOString()],
    );
    return rowCount;
  }

  /**
   * Hands out the box's due commands, oldest first, marking them delivered. Rows another poll is handing out at
   * this moment are skipped rather than waited for.
   */
  async deliver(ownerId: number, boxId: string, limit: number, redeliverySeconds: number): Promise<CommandRecord[]> {
    const { rows } = await this.db.query<CommandRecord>(
      `WITH due AS (
         SELECT id FROM live_commands
         WHERE owner_id = $1 AND box_id = $2 AND acked_at IS NULL AND cancelled_at IS NULL
           AND (last_delivered_at IS NULL OR last_delivered_at <= now() - make_interval(secs => $3::double precision))
         ORDER BY seq LIMIT $4
         FOR UPDATE SKIP LOCKED
       )
       UPDATE live_commands c
       SET delivered_at = COALESCE(c.delivered_at, clock_timestamp()), last_delivered_at = clock_timestamp(), delivery_count = c.delivery_count + 1
       FROM due, live_sessions s
       WHERE c.id = due.id AND s.id = c.session_id
       RETURNING c.id, c.seq, c.session_id AS "sessionId", c.command_type AS "commandType", c.payload, c.created_at AS "createdAt",
                 c.delivered_at AS "deliveredAt", c.acked_at AS "ackedAt", s.publish_salt AS "publishSalt"`,
      [ownerId, boxId, redeliverySeconds, limit],
    );
    return rows.sort((a, b) => a.seq - b.seq);
  }

  /** Seconds until the earliest handed-out, unacknowledged command of the box is due again; undefined if none. */
  async secondsUntilRedelivery(ownerId: number, boxId: string, redeliverySeconds: number): Promise<number | undefined> {
    const { rows } = await this.db.query<{ seconds: number | null }>(
      `SELECT EXTRACT(EPOCH FROM (min(last_delivered_at) + make_interval(secs => $3::double precision) - clock_timestamp()))::float8 AS seconds
       FROM live_commands WHERE owner_id = $1 AND box_id = $2 AND acked_at IS NULL AND cancelled_at IS NULL AND last_delivered_at IS NOT NULL`,
      [ownerId, boxId, redeliverySeconds],
    );
    const seconds = rows[0]?.seconds;
    return seconds === null || seconds === undefined ? undefined : Math.max(0, seconds);
  }

  async pendingCount(ownerId: number, boxId: string): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM live_commands WHERE owner_id = $1 AND box_id = $2 AND acked_at IS NULL AND cancelled_at IS NULL`,
      [ownerId, boxId],
    );
    return rows[0]?.n ?? 0;
  }

  async findForBox(db: Queryable, ownerId: number, boxId: string, id: string, lock = false): Promise<AckableCommand | undefined> {
    if (!isUuid(id)) return undefined;
    const { rows } = await db.query<AckableCommand>(
      `SELECT id, session_id AS "sessionId", command_type AS "commandType", payload, acked_at AS "ackedAt"
       FROM live_commands WHERE id = $1 AND owner_id = $2 AND box_id = $3${lock ? ' FOR UPDATE' : ''}`,
      [id, ownerId, boxId],
    );
    return rows[0];
  }

  async acknowledge(db: Queryable, id: string, status: string, payload: unknown): Promise<void> {
    await db.query(`UPDATE live_commands SET acked_at = now(), ack_status = $2, ack_payload = $3::jsonb WHERE id = $1`, [id, status, payload === undefined ? null : JSON.stringify(payload)]);
  }
}
