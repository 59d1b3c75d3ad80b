export type Point = readonly [number, number];

/** Even-odd rule; points exactly on an edge may land on either side, which hysteresis absorbs. */
export function isInsidePolygon(p: Point, polygon: readonly Point[]): boolean {
  let inside = false;
  for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
    const [xi, yi] = polygon[i]!;
    const [xj, yj] = polygon[j]!;
    if (yi > p[1] !== yj > p[1] && p[0] < ((xj - xi) * (p[1] - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

function distanceToSegment(p: Point, a: Point, b: Point): number {
  const dx = b[0] - a[0];
  const dy = b[1] - a[1];
  const lengthSquared = dx * dx + dy * dy;
  const t = lengthSquared === 0 ? 0 : Math.max(0, Math.min(1, ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / lengthSquared));
  return Math.hypot(p[0] - (a[0] + t * dx), p[1] - (a[1] + t * dy));
}

/** Distance to the polygon's boundary: negative inside, positive outside. */
export function signedDistanceToPolygon(p: Point, polygon: readonly Point[]): number {
  let nearest = Infinity;
  for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
    nearest = Math.min(nearest, distanceToSegment(p, polygon[j]!, polygon[i]!));
  }
  return isInsidePolygon(p, polygon) ? -nearest : nearest;
}

/**
 * A counting line given as two points becomes a zone: the half-plane on the line's left (seen from the first point
 * towards the second), clipped to a generous square, so "inside" means "on the hive's side of the line".
 */
export function zoneFromLine(a: Point, b: Point, reach = 100_000): Point[] {
  const dx = b[0] - a[0];
  const dy = b[1] - a[1];
  const length = Math.hypot(dx, dy);
  if (length === 0) throw new Error('a counting line needs two distinct points');
  const ux = (dx / length) * reach;
  const uy = (dy / length) * reach;
  // Left normal in image coordinates (y grows downwards) is (dy, -dx).
  const nx = (dy / length) * reach;
  const ny = (-dx / length) * reach;
  return [
    [a[0] - ux, a[1] - uy],
    [b[0] + ux, b[1] + uy],
    [b[0] + ux + nx, b[1] + uy + ny],
    [a[0] - ux + nx, a[1] - uy + ny],
  ];
}
