// Waiting for a state the code under test reaches on its own (a file reload, a counted close).
// Bounded, and it fails with what never happened rather than leaving a test to hang.

/**
 * Polls `probe` every `everyMs` (10) until it gives a truthy value and resolves with it; rejects after
 * `ms`. A slow system (a cluster's API, a pod) wants a longer period than a local process.
 */
export async function eventually<T>(probe: () => T | Promise<T>, what: string, ms = 5000, everyMs = 10): Promise<Exclude<T, false | null | undefined | 0 | ''>> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v as Exclude<T, false | null | undefined | 0 | ''>;
    if (Date.now() > until) throw new Error(`never happened within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
