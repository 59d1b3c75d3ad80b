/**
 * Reads the stderr of an ffmpeg run started with `-loglevel level+info`, line by line. Two things in it matter: the
 * errors, which a failure message quotes (warnings and the informational header are left out, as `-loglevel error`
 * would), and the frame rate of the output stream, which the header names before the first frame is written. A
 * live source is read at up to `source.fps` but no faster than it sends, so that rate is the one its frames are
 * taken at.
 */
export class FfmpegLog {
  /** Frames per second ffmpeg writes, once its header has said. */
  outputFps: number | undefined;
  private inOutputHeader = false;

  /** Takes one line; returns the text a failure message may quote, if the line is such. */
  read(line: string): string | undefined {
    // "[error] text", or with the part of ffmpeg that speaks first: "[tcp @ 0x55d0…] [error] text".
    const match = /^(?:\[([^\]@]*?) @ [^\]]*\] )?\[(trace|debug|verbose|info|warning|error|fatal|panic)\] ?(.*)$/.exec(line);
    if (!match) return line.trim() || undefined;
    const [, speaker, level, text = ''] = match;
    if (level === 'info' && speaker === undefined) this.readHeader(text);
    if (level !== 'error' && level !== 'fatal' && level !== 'panic') return undefined;
    // The speaker by name only: its address ("tcp @ 0x55d0…") differs at every run, so the same failure read as a new one.
    return (speaker ? `${speaker}: ${text}` : text).trim() || undefined;
  }

  private readHeader(text: string): void {
    if (/^Output #0\b/.test(text)) this.inOutputHeader = true;
    else if (/^\S/.test(text)) this.inOutputHeader = false;
    if (!this.inOutputHeader || this.outputFps !== undefined || !/^\s*Stream #\d+:\d+.*: Video: /.test(text)) return;
    const rate = /, (\d+(?:\.\d+)?)(k?) fps\b/.exec(text);
    if (rate) this.outputFps = exactRate(Number(rate[1]) * (rate[2] === 'k' ? 1000 : 1));
  }
}

/**
 * ffmpeg prints a rate to two decimals: 29.97 stands for 30000/1001, whose frames drift a frame a day from 29.97's.
 * A rate that close to n × 1000/1001 is taken as that.
 */
export function exactRate(printed: number): number {
  if (Number.isInteger(printed)) return printed;
  const ntsc = (Math.round(printed * 1.001) * 1000) / 1001;
  return Math.abs(ntsc - printed) < 0.005 ? ntsc : printed;
}
