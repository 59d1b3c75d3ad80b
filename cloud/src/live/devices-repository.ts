import type { LiveDeviceStatusBody } from '@hivegate/shared';
import type { Queryable } from '../db/database.ts';

/** The status fields a device sent, without `boxId`; absent fields keep their stored value, `null` clears one. */
export type DeviceStatusFields = Omit<Partial<LiveDeviceStatusBody>, 'boxId'>;

const STATUS_KEYS = ['deviceId', 'appVersion', 'cameraStatus', 'publisherState', 'lastErrorCode', 'lastErrorMessage', 'status'] as const;

export function pickStatusFields(source: Record<string, unknown> | null | undefined): DeviceStatusFields {
  const fields: Record<string, unknown> = {};
  if (!source) return fields;
  for (const key of STATUS_KEYS) if (key in source) fields[key] = source[key];
  return fields as DeviceStatusFields;
}

export interface DeviceRecord {
  boxId: string;
  deviceId: string | null;
  appVersion: string | null;
  cameraStatus: unknown;
  publisherState: unknown;
  lastErrorCode: string | null;
  lastErrorMessage: string | null;
  diagnostics: unknown;
  lastSeenAt: Date;
  statusUpdatedAt: Date;
  /** Relays the device said it cannot publish with, until it reports another appVersion. */
  refusedRelays: string[];
}

const DEVICE_COLUMNS = `box_id AS "boxId", device_id AS "deviceId", app_version AS "appVersion", camera_status AS "cameraStatus",
  publisher_state AS "publisherState", last_error_code AS "lastErrorCode", last_error_message AS "lastErrorMessage",
  diagnostics, last_seen_at AS "lastSeenAt", status_updated_at AS "statusUpdatedAt", refused_relays AS "refusedRelays"`;

/** Presence (last seen) and the latest status per (owner, box) of the entrance observers. */
export class LiveDevicesRepository {
  constructor(private readonly db: Queryable) {}

  /**
   * Records a sighting with whatever status fields came along and returns the box's sessions that were waiting
   * for the device (DEVICE_OFFLINE), in one round trip: every poll of every device comes through here.
   */
  async recordSighting(ownerId: number, boxId: string, fields: DeviceStatusFields, db: Queryable = this.db): Promise<string[]> {
    const { rows } = await db.query<{ id: string }>(
      `WITH seen AS (
         INSERT INTO live_devices AS d (owner_id, box_id, device_id, app_version, camera_status, publisher_state,
                                        last_error_code, last_error_message, diagnostics, last_seen_at, status_updated_at)
         VALUES ($1, $2, $3::jsonb->>'deviceId', $3::jsonb->>'appVersion', NULLIF($3::jsonb->'cameraStatus', 'null'),
                 NULLIF($3::jsonb->'publisherState', 'null'), $3::jsonb->>'lastErrorCode', $3::jsonb->>'lastErrorMessage',
                 NULLIF($3::jsonb->'status', 'null'), now(), now())
         ON CONFLICT (owner_id, box_id) DO UPDATE SET
           device_id = CASE WHEN $3::jsonb ? 'deviceId' THEN EXCLUDED.device_id ELSE d.device_id END,
           app_version = CASE WHEN $3::jsonb ? 'appVersion' THEN EXCLUDED.app_version ELSE d.app_version END,
           camera_status = CASE WHEN $3::jsonb ? 'cameraStatus' THEN EXCLUDED.camera_status ELSE d.camera_status END,
           publisher_state = CASE WHEN $3::jsonb ? 'publisherState' THEN EXCLUDED.publisher_state ELSE d.publisher_state END,
           last_error_code = CASE WHEN $3::jsonb ? 'lastErrorCode' THEN EXCLUDED.last_error_code ELSE d.last_error_code END,
           last_error_message = CASE WHEN $3::jsonb ? 'lastErrorMessage' THEN EXCLUDED.last_error_message ELSE d.last_error_message END,
           diagnostics = CASE WHEN $3::jsonb ? 'status' THEN EXCLUDED.diagnostics ELSE d.diagnostics END,
           -- An update may have taught the device relays it refused before.
           refused_relays = CASE WHEN $3::jsonb ? 'appVersion' AND EXCLUDED.app_version IS DISTINCT FROM d.app_version THEN '{}' ELSE d.refused_relays END,
           last_seen_at = now(),
           status_updated_at = CASE WHEN $3::jsonb = '{}'::jsonb THEN d.status_updated_at ELSE now() END
         RETURNING 1
       )
       SELECT s.id FROM live_sessions s, (SELECT count(*) FROM seen) AS recorded
       WHERE s.owner_id = $1 AND s.box_id = $2 AND s.status = 'DEVICE_OFFLINE'`,
      [ownerId, boxId, JSON.stringify(fields)],
    );
    return rows.map((r) => r.id);
  }

  async isOnline(db: Queryable, ownerId: number, boxId: string, onlineSeconds: number): Promise<boolean> {
    const { rows } = await db.query<{ online: boolean }>(
      `SELECT last_seen_at > now() - make_interval(secs => $3::double precision) AS online FROM live_devices WHERE owner_id = $1 AND box_id = $2`,
      [ownerId, boxId, onlineSeconds],
    );
    return rows[0]?.online ?? false;
  }

  async find(ownerId: number, boxId: string, db: Queryable = this.db): Promise<DeviceRecord | undefined> {
    const { rows } = await db.query<DeviceRecord>(
      `SELECT ${DEVICE_COLUMNS} FROM live_devices WHERE owner_id = $1 AND box_id = $2`,
      [ownerId, boxId],
    );
    return rows[0];
  }

  /** Remembers that the box's device cannot publish with `relay`. */
  async recordRelayRefusal(db: Queryable, ownerId: number, boxId: string, relay: string): Promise<void> {
    await db.query(
      `UPDATE live_devices SET refused_relays = array_append(array_remove(refused_relays, $3), $3) WHERE owner_id = $1 AND box_id = $2`,
      [ownerId, boxId, relay],
    );
  }

  /** The owner's device of a box with its presence judged by the database clock, the one last_seen_at is stamped by. */
  async presence(ownerId: number, boxId: string, onlineSeconds: number): Promise<(DeviceRecord & { online: boolean }) | undefined> {
    const { rows } = await this.db.query<DeviceRecord & { online: boolean }>(
      `SELECT ${DEVICE_COLUMNS}, last_seen_at > now() - make_interval(secs => $3::double precision) AS online
       FROM live_devices WHERE owner_id = $1 AND box_id = $2`,
      [ownerId, boxId, onlineSeconds],
    );
    return rows[0];
  }
}
