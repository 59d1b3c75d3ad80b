import { describe, expect, it } from 'vitest';
import { isRefusal, untilRefused } from './until-refused.ts';

/** An endless source of numbered events that records whether it was closed. */
function counter() {
  let n = 0;
  const state = { closed: false };
  const source: AsyncIterator<number> = {
    next: async () => (state.closed ? { value: undefined, done: true } : { value: ++n, done: false }),
    return: async () => {
      state.closed = true;
      return { value: undefined, done: true };
    },
  };
  return { source, state };
}

describe('untilRefused', () => {
  // A revoked token's subscription stayed open and answered every event with an error.
  it('passes events until the first refusal, gives that once, then ends and closes the source', async () => {
    const { source, state } = counter();
    const token: { refusal?: string } = {};
    const events = untilRefused(source, async () => token.refusal);
    expect(await events.next()).toEqual({ value: 1, done: false });
    expect(await events.next()).toEqual({ value: 2, done: false });
    token.refusal = 'token has been revoked';
    const refused = await events.next();
    expect(refused).toEqual({ value: { refused: 'token has been revoked' }, done: false });
    expect(isRefusal(refused.value)).toBe(true);
    expect(state.closed).toBe(true);
    expect(await events.next()).toEqual({ value: undefined, done: true });
    expect(await events.next()).toEqual({ value: undefined, done: true });
  });

  it('closes the source when the subscriber leaves', async () => {
    const { source, state } = counter();
    const events = untilRefused(source, async () => undefined);
    await events.next();
    await events.return!();
    expect(state.closed).toBe(true);
    expect(isRefusal(1)).toBe(false);
  });
});
