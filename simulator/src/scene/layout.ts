/**
 * Where things are in the picture. The camera looks down at the landing board with the hive front at the
 * top: a painted wall, the entrance slot (a dark horizontal opening) along its lower edge, and the board
 * filling the rest. Bees that walk into the slot pass behind the wall's lower edge and vanish.
 */

import { signedDistanceToPolygon, type Point } from '@hivegate/shared';

export type { Point };

/**
 * A centre this close to the zone's outline is on neither side (the shared counting rules' default, passed
 * to the counter explicitly and written into the ground truth so an agent can use the same).
 */
export const HYSTERESIS_PX = 6;

export interface Layout {
  width: number;
  height: number;
  /** Top of the slot: the wall's lower edge. Walking bees are hidden above this line. */
  slotTop: number;
  /** Bottom of the slot: where the landing board starts. */
  slotBottom: number;
  slotLeft: number;
  slotRight: number;
  /** Nominal bee length in pixels. */
  beeLength: number;
  /** The entrance zone used for counting, as written to the ground truth (clockwise, pixel coordinates). */
  zone: Point[];
  /** How far from the zone's outline a centre must be to count as inside or outside it. */
  hysteresisPx: number;
}

export function createLayout(width: number, height: number, beeLength: number): Layout {
  const slotTop = Math.round(height * 0.22);
  const slotBottom = slotTop + Math.max(4, Math.round(beeLength * 0.6));
  const slotLeft = Math.round(width * 0.14);
  const slotRight = Math.round(width * 0.86);
  // The zone hugs the slot: it reaches a little into the wall (where a vanishing bee's last visible part
  // sits) and about one bee length onto the board (where an emerging bee first shows).
  const zoneTop = slotTop - Math.round(beeLength * 0.3);
  const zoneBottom = slotBottom + Math.round(beeLength * 0.9);
  const zoneLeft = slotLeft - Math.round(beeLength * 0.5);
  const zoneRight = slotRight + Math.round(beeLength * 0.5);
  return {
    width,
    height,
    slotTop,
    slotBottom,
    slotLeft,
    slotRight,
    beeLength,
    zone: [
      [zoneLeft, zoneTop],
      [zoneRight, zoneTop],
      [zoneRight, zoneBottom],
      [zoneLeft, zoneBottom],
    ],
    hysteresisPx: HYSTERESIS_PX,
  };
}

/** Which side of the zone a centre is on, with the counter's hysteresis: undefined on the fence. */
export function zoneSide(layout: Layout, x: number, y: number): 'inside' | 'outside' | undefined {
  const distance = signedDistanceToPolygon([x, y], layout.zone);
  if (distance <= -layout.hysteresisPx) return 'inside';
  if (distance >= layout.hysteresisPx) return 'outside';
  return undefined;
}
