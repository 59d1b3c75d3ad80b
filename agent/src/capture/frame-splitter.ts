/**
 * Cuts a byte stream into fixed-size frames. Chunks from a pipe have arbitrary boundaries; a frame is
 * copied once into its own buffer so callers may keep it.
 */
export class FrameSplitter {
  private current: Uint8Array;
  private filled = 0;

  constructor(private readonly frameSize: number) {
    if (!Number.isInteger(frameSize) || frameSize <= 0) throw new Error(`frame size must be a positive integer, got ${frameSize}`);
    this.current = new Uint8Array(frameSize);
  }

  /** Returns the frames completed by this chunk, in order. */
  push(chunk: Uint8Array): Uint8Array[] {
    const done: Uint8Array[] = [];
    let offset = 0;
    while (offset < chunk.length) {
      const take = Math.min(this.frameSize - this.filled, chunk.length - offset);
      this.current.set(chunk.subarray(offset, offset + take), this.filled);
      this.filled += take;
      offset += take;
      if (this.filled === this.frameSize) {
        done.push(this.current);
        this.current = new Uint8Array(this.frameSize);
        this.filled = 0;
      }
    }
    return done;
  }

  /** Bytes of an incomplete frame still held (dropped when a connection ends mid-frame). */
  get pendingBytes(): number {
    return this.filled;
  }

  reset(): void {
    this.filled = 0;
  }
}
