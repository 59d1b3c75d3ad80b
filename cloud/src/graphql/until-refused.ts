/** What an event stream gives in place of an event once its subscriber may no longer have it. */
export interface Refusal {
  refused: string;
}

export function isRefusal(value: unknown): value is Refusal {
  return typeof value === 'object' && value !== null && typeof (value as Partial<Refusal>).refused === 'string';
}

/**
 * The events of `source` while `refusal` (asked at each event) finds nothing against the subscriber; at the first
 * refusal one Refusal in place of the event, then the end, and the source is closed. A subscription authenticated
 * once when its socket opened otherwise went on answering every event with an error after its token was revoked.
 * A plain iterator rather than an async generator: a generator's return() waits for the pending next(), so an
 * unsubscribe would not reach the source until the next event.
 */
export function untilRefused<T>(source: AsyncIterator<T>, refusal: () => Promise<string | undefined>): AsyncIterableIterator<T | Refusal> {
  let ended = false;
  const end = async (): Promise<IteratorReturnResult<undefined>> => {
    ended = true;
    await source.return?.();
    return { value: undefined, done: true };
  };
  return {
    async next(): Promise<IteratorResult<T | Refusal>> {
      if (ended) return end();
      const result = await source.next();
      if (result.done) return (ended = true), result;
      const refused = await refusal();
      if (refused === undefined) return result;
      await end();
      return { value: { refused }, done: false };
    },
    return: end,
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
