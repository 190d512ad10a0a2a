// kube-dns --workers=2 under endpoint churn on a real API server (issue 20): clients on their own
// source ports (the kernel keeps each on one thread) ask one headless name without pause while its
// EndpointSlice is replaced in bursts, each version a new address. What they must see: no client
// ever gets an older version than it got before (no thread serves an answer a change dropped once it
// was told), and once a change has had BOUND_MS to reach the threads, nothing older than it.

import t from 'tap';
import { createSocket } from 'node:dgram';
import type { Socket } from 'node:dgram';
import type { Test } from 'tap';
import { startCluster } from './harness/cluster.ts';
import { e2eCanRun } from './harness/gate.ts';
import { startKubeDns } from '../helpers/kubedns.ts';
import { query } from '../helpers/dns-server.ts';
import { parseMessage } from '../../pkg/dns/parse.ts';
import type { AddressData } from '../../pkg/dns/message.ts';

const CLIENTS = 16;
const BURSTS = 6;
/** Changes sent back to back in a burst: answers in flight meet invalidations. */
const PER_BURST = 5;
const QUIET_MS = 2500;
/** Far above the watch-to-answer time (tens of ms): a change older than this is on every thread. */
const BOUND_MS = 1500;
const NAME = 'moving.churn.svc.cluster.local';

const address = (v: number) => `10.200.${v >> 8}.${v & 255}`;
const version = (a: string) => {
  const [, , hi, lo] = a.split('.').map(Number);
  return hi * 256 + lo;
};

function slice(v: number): object {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'moving-1', namespace: 'churn', labels: { 'kubernetes.io/service-name': 'moving' } },
    addressType: 'IPv4',
    endpoints: [{ addresses: [address(v)], conditions: { ready: true } }],
    ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
  };
}

interface Answer {
  sent: number;
  version: number;
}

/** One client: asks NAME again as soon as each answer (or a 1 s timeout) comes, until `running()` is false. */
async function ask(t: Test, port: number, running: () => boolean): Promise<{ answers: Answer[]; lost: number }> {
  const sock: Socket = createSocket('udp4');
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
  t.teardown(() => sock.close());
  const answers: Answer[] = [];
  let lost = 0;
  for (let id = 1; running(); id = (id % 65535) + 1) {
    const sent = Date.now();
    const reply = await new Promise<Buffer | null>((resolve) => {
      const timer = setTimeout(() => resolve(null), 1000);
      const onMessage = (msg: Buffer) => {
        if (msg.readUInt16BE(0) !== id) return;
        clearTimeout(timer);
        sock.off('message', onMessage);
        resolve(msg);
      };
      sock.on('message', onMessage);
      sock.send(query(NAME, 1, id), port, '127.0.0.1');
    });
    if (reply === null) {
      lost++;
      continue;
    }
    const a = parseMessage(reply).answers.find((r) => r.type === 1);
    if (a !== undefined) answers.push({ sent, version: version((a.data as AddressData).address) });
  }
  return { answers, lost };
}

t.test('--workers=2 under endpoint churn: no client sees an answer older than one it saw, nor than a change BOUND_MS old', async (t) => {
  if (!e2eCanRun(t)) return;
  const cluster = await startCluster(t);
  await cluster.apply([
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'churn' } },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'moving', namespace: 'churn' }, spec: { clusterIP: 'None', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } },
    slice(0),
  ]);
  const kd = await startKubeDns(t, { args: [`--kubecfg-file=${cluster.kubeconfig(cluster.kubeDnsToken)}`, '--workers=2', '--autopath=false'] });

  let running = true;
  const clients = Array.from({ length: CLIENTS }, () => ask(t, kd.dnsPort, () => running));
  // When each version was accepted by the API server; the next one's send time ends its window.
  const accepted: number[] = [Date.now()];
  const sentAt: number[] = [0];
  let v = 0;
  for (let b = 0; b < BURSTS; b++) {
    await new Promise((r) => setTimeout(r, QUIET_MS));
    for (let i = 0; i < PER_BURST; i++) {
      sentAt[++v] = Date.now();
      await cluster.apply([slice(v)]);
      accepted[v] = Date.now();
    }
  }
  await new Promise((r) => setTimeout(r, QUIET_MS));
  running = false;
  const results = await Promise.all(clients);

  let regressions = 0;
  let late = 0;
  const examples: string[] = [];
  for (const [c, { answers }] of results.entries()) {
    let seen = 0;
    for (const a of answers) {
      if (a.version < seen) {
        regressions++;
        examples.push(`client ${c}: version ${a.version} after ${seen}`);
      }
      seen = Math.max(seen, a.version);
      // The newest version accepted at least BOUND_MS before this query was sent.
      let due = 0;
      for (let k = v; k > 0; k--) {
        if (accepted[k] + BOUND_MS <= a.sent) {
          due = k;
          break;
        }
      }
      if (a.version < due) {
        late++;
        examples.push(`client ${c}: version ${a.version} for a query sent ${a.sent - accepted[due]} ms after version ${due} was accepted`);
      }
    }
  }
  const total = results.reduce((n, r) => n + r.answers.length, 0);
  t.ok(total > CLIENTS * 100, `${total} answers`);
  t.equal(results.reduce((n, r) => n + r.lost, 0), 0, 'no query unanswered');
  t.equal(regressions, 0, 'no client saw an older version than one it had seen', { examples: examples.slice(0, 10) });
  t.equal(late, 0, `no answer older than a change ${BOUND_MS} ms old`, { examples: examples.slice(0, 10) });
  t.ok(results.every((r) => r.answers.at(-1)?.version === v), `every client ends on the last version (${v})`);
});
