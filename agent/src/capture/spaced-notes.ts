/** A change held back or due, and how many changes it stands for. */
export interface SpacedNote<T> {
  detail: T;
  /** Changes since the log last said one, this one included. */
  changes: number;
}

/**
 * When to say that something changed that may change often: the first change at once, later ones at most once per
 * `minIntervalMs`, each then with how many changes it stands for, and nothing for a change back to what the log
 * said last. The picture rate of a machine that falls behind its camera moves with its load: it was said at every
 * move, a line every 10 s in the journal of an SD card. Pure: the clock comes in as arguments; the caller asks
 * `due` again at `dueAt` for a change held back.
 */
export class SpacedNotes<T> {
  /** The state the log says is in force (or the one set without a note), by key. */
  private said: string | undefined;
  private saidAt: number | undefined;
  private held: { state: string; detail: T } | undefined;
  private changes = 0;

  constructor(private readonly minIntervalMs: number) {}

  /** `state` is in force and needs no note of this kind (a new connection set it, and said so if it had to). */
  settled(state: string): void {
    this.said = state;
    this.held = undefined;
    this.changes = 0;
  }

  /** The state became `state` at `nowMs`: the note to log now, or undefined when there is none or it is held back. */
  changed(state: string, detail: T, nowMs: number): SpacedNote<T> | undefined {
    this.changes++;
    if (state === this.said) {
      this.held = undefined;
      return undefined;
    }
    this.held = { state, detail };
    return this.due(nowMs);
  }

  /** The note held back, once its time has come. */
  due(nowMs: number): SpacedNote<T> | undefined {
    if (!this.held || (this.saidAt !== undefined && nowMs - this.saidAt < this.minIntervalMs)) return undefined;
    const note = { detail: this.held.detail, changes: this.changes };
    this.said = this.held.state;
    this.saidAt = nowMs;
    this.held = undefined;
    this.changes = 0;
    return note;
  }

  /** When the note held back is due, if one is. */
  get dueAt(): number | undefined {
    return this.held && this.saidAt !== undefined ? this.saidAt + this.minIntervalMs : undefined;
  }
}
