// When a program of the pod counts as up: it answers where the others and the user will ask it.
// kube-dns: /readiness is 200 (the cluster file is loaded). dnsmasq-nanny: its /healthz answers and
// its dnscache answers a CHAOS statistics question (neither a hit nor a miss, so the sidecar's counts
// start clean). sidecar: its /healthz answers.

import { Class, Type } from '../dns/constants.ts';
import { exchange } from '../sidecar/dns-client.ts';
import { LOOPBACK } from './plan.ts';
import type { LocalPodOptions, ProgramName } from './plan.ts';

const TRY_TIMEOUT_MS = 1000;

async function httpOk(port: number, path: string): Promise<boolean> {
  try {
    const res = await fetch(`http://${LOOPBACK}:${port}${path}`, { signal: AbortSignal.timeout(TRY_TIMEOUT_MS) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

async function dnsAnswers(port: number): Promise<boolean> {
  try {
    await exchange({ host: LOOPBACK, port }, { name: 'cachesize.bind', type: Type.TXT, class: Class.CH }, TRY_TIMEOUT_MS);
    return true;
  } catch {
    return false;
  }
}

export type UpCheck = () => Promise<boolean>;

export function upChecks(o: LocalPodOptions): Record<ProgramName, UpCheck> {
  return {
    'kube-dns': () => httpOk(o.healthzPort, '/readiness'),
    'dnsmasq-nanny': async () => (await httpOk(o.nannyMetricsPort, '/healthz')) && (await dnsAnswers(o.dnsPort)),
    sidecar: () => httpOk(o.sidecarPort, '/healthz'),
  };
}
