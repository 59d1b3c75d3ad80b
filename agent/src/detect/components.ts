/** One 8-connected blob of set pixels with the statistics the detectors need. */
export interface Component {
  area: number;
  sumX: number;
  sumY: number;
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
}

/**
 * Two-pass connected-component labelling (8-connectivity) with a union-find over provisional labels.
 * `mask` holds 0/1 per pixel. Components come back in raster order of their first pixel.
 */
export function labelComponents(mask: Uint8Array, width: number, height: number): Component[] {
  const labels = new Int32Array(width * height);
  let parent = new Int32Array(256);
  let next = 1;
  const find = (a: number): number => {
    while (parent[a] !== a) {
      parent[a] = parent[parent[a]!]!; // path halving
      a = parent[a]!;
    }
    return a;
  };
  const union = (a: number, b: number): number => {
    const ra = find(a);
    const rb = find(b);
    if (ra === rb) return ra;
    if (ra < rb) {
      parent[rb] = ra;
      return ra;
    }
    parent[ra] = rb;
    return rb;
  };

  for (let y = 0; y < height; y++) {
    const row = y * width;
    for (let x = 0; x < width; x++) {
      const i = row + x;
      if (mask[i] === 0) continue;
      // Already-visited neighbours: W, NW, N, NE.
      let label = x > 0 ? labels[i - 1]! : 0;
      if (y > 0) {
        const above = i - width;
        const nw = x > 0 ? labels[above - 1]! : 0;
        const n = labels[above]!;
        const ne = x < width - 1 ? labels[above + 1]! : 0;
        if (nw !== 0) label = label === 0 ? nw : label === nw ? label : union(label, nw);
        if (n !== 0) label = label === 0 ? n : label === n ? label : union(label, n);
        if (ne !== 0) label = label === 0 ? ne : label === ne ? label : union(label, ne);
      }
      if (label === 0) {
        if (next >= parent.length) {
          const grown = new Int32Array(parent.length * 2);
          grown.set(parent);
          parent = grown;
        }
        parent[next] = next;
        label = next++;
      }
      labels[i] = label;
    }
  }

  const componentOf = new Int32Array(next).fill(-1);
  const components: Component[] = [];
  for (let y = 0; y < height; y++) {
    const row = y * width;
    for (let x = 0; x < width; x++) {
      const label = labels[row + x]!;
      if (label === 0) continue;
      const root = find(label);
      let index = componentOf[root]!;
      if (index < 0) {
        index = components.length;
        componentOf[root] = index;
        components.push({ area: 0, sumX: 0, sumY: 0, minX: x, minY: y, maxX: x, maxY: y });
      }
      const c = components[index]!;
      c.area++;
      c.sumX += x;
      c.sumY += y;
      if (x < c.minX) c.minX = x;
      if (x > c.maxX) c.maxX = x;
      if (y > c.maxY) c.maxY = y;
    }
  }
  return components;
}
