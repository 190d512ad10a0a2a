// Operations under load, as an operator does them: one pod of the cluster DNS deleted, or its
// Deployment rolled, while clients in a pod ask through the kube-dns ClusterIP. Two kinds of client:
// dnsperf (long-lived sockets, a fixed rate, lost = no answer within its timeout) and a lookup loop
// that opens a new socket per lookup, as most applications' resolvers do. Shared by
// test/cluster/rollout.test.ts and bench/rollout.ts.

import { execIn, waitFor, describe } from './addon.ts';
import type { NodeCluster } from './cluster.ts';
import { NET } from './node-config.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const DNS_NS = 'kube-system';
/** The label every cluster DNS pod carries (ours, and CoreDNS as kubeadm deploys it). */
const DNS_SELECTOR = 'k8s-app=kube-dns';

/** Names the load asks: answered by the cluster DNS, never by the world. */
const LOAD_NAMES = ['kubernetes.default.svc.cluster.local A', 'kube-dns.kube-system.svc.cluster.local A', 'kubernetes.default.svc.cluster.local AAAA', '_https._tcp.kubernetes.default.svc.cluster.local SRV'];

export interface LoadShape {
  seconds: number;
  /** dnsperf: queries per second, over `sockets` long-lived sockets, each query lost after `timeoutS`. */
  qps: number;
  sockets: number;
  timeoutS: number;
  /** The lookup loop: lookups per second, each from a new socket (a dig process, one try of `timeoutS`). */
  lookupsPerSecond: number;
}

/** The issue's load: 1,000 queries/s over 20 sockets, 2 s timeout; 10 lookups/s from new sockets. */
export const ISSUE_LOAD: Omit<LoadShape, 'seconds'> = { qps: 1000, sockets: 20, timeoutS: 2, lookupsPerSecond: 10 };

export interface LoadResult {
  sent: number;
  completed: number;
  lost: number;
  lookups: number;
  /** Lookups without an answer, with when (ms since the load began) and what dig said. */
  failedLookups: string[];
}

/** Writes dnsperf's query file into the client pod. */
export async function prepareLoad(c: NodeCluster, ns: string, pod: string): Promise<void> {
  await execIn(c, ns, pod, ['sh', '-c', `printf '${LOAD_NAMES.join('\\n')}\\n' > /tmp/queries`]);
}

/** Distinct names in prepareMissLoad's file: more than 100 s of the issue's load asks. */
const MISS_NAMES = 120_000;

/**
 * Writes a query file of names no cache holds (Services of `ns` that do not exist, each asked once
 * per pass of the file), so that behind a node-local cache every query still reaches the cluster DNS.
 */
export async function prepareMissLoad(c: NodeCluster, ns: string, pod: string): Promise<void> {
  await execIn(c, ns, pod, ['sh', '-c', `seq 1 ${MISS_NAMES} | sed 's/.*/miss&.${ns}.svc.cluster.local A/' > /tmp/queries`]);
}

/**
 * The lookup loop, in bash: a dig (a new process, a new socket) on a fixed schedule for `seconds`;
 * one line per lookup, `ok` or `fail at <ms>: <what dig said>`.
 */
function lookupLoop(shape: LoadShape): string {
  const gapNs = Math.round(1e9 / shape.lookupsPerSecond);
  return `
    i=0; start=$(date +%s%N); end=$(( start + ${shape.seconds} * 1000000000 ))
    while [ "$(date +%s%N)" -lt "$end" ]; do
      out=$(dig @${NET.dnsServiceIp} +tries=1 +time=${shape.timeoutS} +short kubernetes.default.svc.cluster.local 2>&1)
      if [ -n "$out" ] && [[ "$out" != *';;'* ]]; then echo ok; else echo "fail at $(( ($(date +%s%N) - start) / 1000000 ))ms: $(echo $out)"; fi
      i=$((i + 1)); pause=$(( start + i * ${gapNs} - $(date +%s%N) ))
      if [ "$pause" -gt 0 ]; then sleep "$((pause / 1000000000)).$(printf %09d $((pause % 1000000000)))"; fi
    done`;
}

/** Both clients at once in the pod for `shape.seconds`; resolves when both are done. */
export async function runLoad(c: NodeCluster, ns: string, pod: string, shape: LoadShape): Promise<LoadResult> {
  const perf = execIn(c, ns, pod, ['dnsperf', '-s', NET.dnsServiceIp, '-d', '/tmp/queries', '-c', String(shape.sockets), '-Q', String(shape.qps), '-l', String(shape.seconds), '-t', String(shape.timeoutS)], (shape.seconds + 30) * 1000);
  const loop = execIn(c, ns, pod, ['bash', '-c', lookupLoop(shape)], (shape.seconds + 30) * 1000);
  const [perfOut, loopOut] = await Promise.all([perf, loop]);
  const num = (re: RegExp): number => Number(re.exec(perfOut)?.[1] ?? NaN);
  const lines = loopOut.split('\n').filter((l) => l !== '');
  return {
    sent: num(/Queries sent:\s+(\d+)/),
    completed: num(/Queries completed:\s+(\d+)/),
    lost: num(/Queries lost:\s+(\d+)/),
    lookups: lines.length,
    failedLookups: lines.filter((l) => l.startsWith('fail')),
  };
}

export type Disruption = 'pod deleted' | 'rollout restart';

/** What is disrupted: a Deployment or DaemonSet of kube-system, its pods' label selector, how many it runs. */
export interface Workload {
  kind: 'deployment' | 'daemonset';
  name: string;
  selector: string;
  replicas: number;
}

/** The cluster DNS's Deployment (ours or CoreDNS's: both label their pods k8s-app=kube-dns). */
export const dnsDeployment = (name: string, replicas: number): Workload => ({ kind: 'deployment', name, selector: DNS_SELECTOR, replicas });

interface WorkloadPod {
  name: string;
  uid: string;
  ready: boolean;
  terminating: boolean;
}

export async function podsOf(c: NodeCluster, selector = DNS_SELECTOR): Promise<WorkloadPod[]> {
  const list = await c.request('GET', `/api/v1/namespaces/${DNS_NS}/pods?labelSelector=${encodeURIComponent(selector)}`);
  return list.body.items.map((p: any) => ({
    name: p.metadata.name,
    uid: p.metadata.uid,
    ready: p.status?.conditions?.some((x: { type: string; status: string }) => x.type === 'Ready' && x.status === 'True') ?? false,
    terminating: p.metadata.deletionTimestamp !== undefined,
  }));
}

/**
 * The disruption on `w`, then waits until it is over: every pod it began with gone (one, for a pod
 * deleted), `w.replicas` new ones ready. Resolves with how long that took.
 */
export async function disrupt(c: NodeCluster, w: Workload, what: Disruption): Promise<number> {
  const before = await podsOf(c, w.selector);
  const started = Date.now();
  if (what === 'pod deleted') await c.kubectl(['-n', DNS_NS, 'delete', 'pod', before[0].name, '--wait=false']);
  else await c.kubectl(['-n', DNS_NS, 'rollout', 'restart', `${w.kind}/${w.name}`]);
  const old = new Set((what === 'pod deleted' ? before.slice(0, 1) : before).map((p) => p.uid));
  await waitFor(`${w.name}, ${what}: the old pods gone, ${w.replicas} new ones ready`, async () => {
    const now = await podsOf(c, w.selector);
    return now.every((p) => !old.has(p.uid)) && now.filter((p) => p.ready && !p.terminating).length === w.replicas;
  }, 180_000, () => describe(c, DNS_NS));
  return Date.now() - started;
}

/**
 * The load, with the disruption `leadS` seconds into it; throws when the disruption outlasts the load
 * (the count would miss its end).
 */
export async function lossDuring(c: NodeCluster, ns: string, pod: string, shape: LoadShape, w: Workload, what: Disruption, leadS = 3): Promise<LoadResult & { disruptionMs: number }> {
  const load = runLoad(c, ns, pod, shape);
  await sleep(leadS * 1000);
  const disruptionMs = await disrupt(c, w, what);
  const result = await load;
  if (leadS * 1000 + disruptionMs > (shape.seconds - 2) * 1000) throw new Error(`${what} took ${disruptionMs} ms: longer than the ${shape.seconds} s load allows`);
  return { ...result, disruptionMs };
}
