import { describe, expect, it } from 'vitest';
import { cameraVerdict } from './throughput.ts';

describe('cameraVerdict', () => {
  it('says how much room is left when the pipeline keeps up', () => {
    expect(cameraVerdict(120, 30)).toBe("keeps up with a 30 fps camera, 4.0× real time (busy 25 % of each frame's time)");
    expect(cameraVerdict(30, 30)).toMatch(/^keeps up with a 30 fps camera, 1\.0× real time \(busy 100 %/);
  });

  it("says what share of a live camera's frames would be lost when it falls behind", () => {
    expect(cameraVerdict(24, 30)).toMatch(/^falls behind a 30 fps camera \(0\.80× real time\): a live camera would lose about 20 % of its frames/);
  });
});
