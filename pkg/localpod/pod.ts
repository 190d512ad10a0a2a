// The local pod: kube-dns, dnsmasq-nanny (with its dnscache) and the sidecar, each under a nanny
// Supervisor (prefixed output, restart with backoff after an unexpected exit, SIGTERM then SIGKILL
// on stop). kube-dns and the nanny start together; the sidecar once both answer, so its first probes
// and statistics find them. Closed all at once.

import { childCommand, programEntry } from '../nanny/exec.ts';
import { describeExit, stoppedCleanly, Supervisor } from '../nanny/supervisor.ts';
import type { Logger } from '../log/log.ts';
import { programOutput } from './output.ts';
import { podPlan } from './plan.ts';
import type { LocalPodOptions, ProgramName } from './plan.ts';
import { upChecks } from './ready.ts';

export interface LocalPodDeps {
  log: Logger;
  /** Where the programs' lines go, already prefixed. */
  write: (line: string) => void;
}

export interface LocalPod {
  /**
   * Starts the programs; null once every one answers, else why the pod did not come up (a program
   * exited while starting, or `timeoutMs` passed). Stopping the pod is left to the caller.
   */
  start(timeoutMs: number): Promise<string | null>;
  /** Resolves when a program keeps failing and its supervisor gave up on it. */
  crashLoop: Promise<string>;
  /** The programs' pids now (a restarted program has a new one). */
  pids(): Partial<Record<ProgramName, number>>;
  /** SIGTERM to all three at once, wait (SIGKILL after the grace period); true when each stopped cleanly. */
  close(): Promise<boolean>;
}

/**
 * Each program's grace after SIGTERM. Each stops in well under a second (lame duck off, drain at most
 * 3 s), but a stopped kube-dns was once seen to take 5 s more to exit on a loaded machine (every socket
 * closed, process.exit called: Node's own teardown), so 10 s, as the kubelet's 30 s leave room too. The
 * nanny stops dnscache itself (SIGKILL after 5 s): give it longer, so it never leaves one behind.
 */
const KILL_AFTER_MS: Record<ProgramName, number> = { 'kube-dns': 10_000, 'dnsmasq-nanny': 13_000, sidecar: 10_000 };
const POLL_MS = 100;
const STAGES: readonly (readonly ProgramName[])[] = [['kube-dns', 'dnsmasq-nanny'], ['sidecar']];
/**
 * Stopped one after another, each before what it asks: the sidecar probes the other two, and dnscache
 * forwards to kube-dns (stopped together, dnscache's forwards in flight would wait on nobody).
 */
const STOP_ORDER: readonly ProgramName[] = ['sidecar', 'dnsmasq-nanny', 'kube-dns'];

interface PodProgram {
  name: ProgramName;
  args: string[];
  supervisor: Supervisor;
}

export function createLocalPod(o: LocalPodOptions, deps: LocalPodDeps): LocalPod {
  const { log } = deps;
  let closing = false;
  let gaveUp!: (reason: string) => void;
  const crashLoop = new Promise<string>((resolve) => (gaveUp = resolve));
  const programs: PodProgram[] = podPlan(o).map((plan) => {
    const supervisor = new Supervisor({
      command: childCommand(programEntry(plan.name)),
      log: log.child(plan.name),
      output: programOutput(plan.name, deps.write),
      killAfterMs: KILL_AFTER_MS[plan.name],
      onCrashLoop: (reason) => gaveUp(`${plan.name}: ${reason}`),
    });
    return { name: plan.name, args: plan.args, supervisor };
  });
  const checks = upChecks(o);

  /** null once each of `stage` answers; else why not. */
  async function waitUp(stage: PodProgram[], until: number, timeoutMs: number): Promise<string | null> {
    const waiting = new Set(stage);
    for (;;) {
      if (closing) return 'the pod is stopping';
      for (const p of waiting) {
        // Started twice, or not running: it exited before it could answer.
        if (!p.supervisor.up || p.supervisor.stats.starts > 1) return `${p.name} exited while starting (its lines above say why)`;
        if (await checks[p.name]()) waiting.delete(p);
      }
      if (waiting.size === 0) return null;
      if (Date.now() > until) return `not up after ${timeoutMs / 1000}s: ${[...waiting].map((p) => p.name).join(', ')}`;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  return {
    async start(timeoutMs) {
      const until = Date.now() + timeoutMs;
      for (const names of STAGES) {
        const stage = programs.filter((p) => names.includes(p.name));
        for (const p of stage) p.supervisor.start(p.args);
        const failure = await waitUp(stage, until, timeoutMs);
        if (failure !== null) return failure;
      }
      return null;
    },
    crashLoop,
    pids() {
      const pids: Partial<Record<ProgramName, number>> = {};
      for (const p of programs) if (p.supervisor.up) pids[p.name] = p.supervisor.pid;
      return pids;
    },
    async close() {
      closing = true;
      let clean = true;
      for (const name of STOP_ORDER) {
        const exit = await programs.find((p) => p.name === name)!.supervisor.stop();
        if (stoppedCleanly(exit)) continue;
        clean = false;
        log.warn('did not stop cleanly', { program: name, how: describeExit(exit!) });
      }
      return clean;
    },
  };
}
