// Query log lines to stdout: what one turn of the event loop logged goes out in one write, so a
// busy server makes a write per turn, not per query. Past LINES_PENDING_MAX bytes in one turn, lines
// are dropped and counted, and the count is logged with the next write (a flood must not hold the
// process's memory in log text).

const LINES_PENDING_MAX = 4 * 1024 * 1024;

export class LineBatch {
  private pending = '';
  private dropped = 0;
  private scheduled = false;
  private readonly out: (text: string) => void;

  constructor(out: (text: string) => void = (text) => process.stdout.write(text)) {
    this.out = out;
  }

  add(line: string): void {
    if (this.pending.length > LINES_PENDING_MAX) {
      this.dropped++;
      return;
    }
    this.pending += `${line}\n`;
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.flush);
  }

  readonly flush = (): void => {
    this.scheduled = false;
    if (this.dropped > 0) this.pending += `[WARNING] plugin/log: ${this.dropped} query log lines dropped (more than ${LINES_PENDING_MAX} bytes in one turn)\n`;
    const text = this.pending;
    this.pending = '';
    this.dropped = 0;
    if (text !== '') this.out(text);
  };
}
