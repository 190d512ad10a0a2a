// The loop behind the probes and the statistics poller: one round at a time, the next one scheduled
// when a round ends (its delay chosen from that round), and stop() waiting for a round in flight.

export class Repeat {
  /** One round; resolves with the delay before the next one. Must not reject. */
  private readonly round: () => Promise<number>;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(round: () => Promise<number>) {
    this.round = round;
  }

  start(firstDelayMs: number): void {
    this.schedule(firstDelayMs);
  }

  /** No more rounds; waits for the one in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.round().then((next) => {
        this.running = null;
        this.schedule(next);
      });
    }, delayMs);
  }
}
