/**
 * Where things are in the picture. The camera looks down at the landing board with the hive front at the
 * top: a painted wall, the entrance slot (a dark horizontal opening) along its lower edge, and the board
 * filling the rest. Bees that walk into the slot pass behind the wall's lower edge and vanish.
 */

export type Point = readonly [number, number];

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
  /** How far outside the zone a bee must be before it counts as outside (the counter's hysteresis). */
  zoneMarginPx: number;
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
    zoneMarginPx: Math.max(4, Math.round(beeLength * 0.3)),
  };
}

/** Even–odd point-in-polygon test. */
export function insidePolygon(polygon: readonly Point[], x: number, y: number): boolean {
  let inside = false;
  for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
    const [xi, yi] = polygon[i] as Point;
    const [xj, yj] = polygon[j] as Point;
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/** Distance from a point to the polygon's outline (0 on the edge). */
export function distanceToPolygonEdge(polygon: readonly Point[], x: number, y: number): number {
  let best = Infinity;
  for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
    const [ax, ay] = polygon[j] as Point;
    const [bx, by] = polygon[i] as Point;
    const dx = bx - ax;
    const dy = by - ay;
    const lengthSquared = dx * dx + dy * dy;
    const u = lengthSquared === 0 ? 0 : Math.max(0, Math.min(1, ((x - ax) * dx + (y - ay) * dy) / lengthSquared));
    best = Math.min(best, Math.hypot(x - (ax + u * dx), y - (ay + u * dy)));
  }
  return best;
}

/** Clearly outside the zone: beyond the counter's hysteresis margin. */
export function clearlyOutsideZone(layout: Layout, x: number, y: number): boolean {
  return !insidePolygon(layout.zone, x, y) && distanceToPolygonEdge(layout.zone, x, y) > layout.zoneMarginPx;
}
