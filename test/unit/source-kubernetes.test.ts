// The API source's pure parts: backoff, the relist diff, the silent-watch watchdog, $VAR expansion;
// and the watch stream's line reading, against a loopback HTTP server that cuts events where it likes.
// The loop against a real kube-apiserver is proven in test/e2e/kubedns-api.test.ts.

import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import t from 'tap';
import type { Test } from 'tap';
import { eventually } from '../helpers/eventually.ts';
import { createLogger } from '../../pkg/log/log.ts';
import { Backoff } from '../../pkg/source/kubernetes-backoff.ts';
import { ForgetfulObjects, KnownObjects, objectKey, tombstone } from '../../pkg/source/kubernetes-known.ts';
import { SilenceWatchdog } from '../../pkg/source/kubernetes-silence.ts';
import { connectKube, expandEnv } from '../../pkg/source/kubernetes-client.ts';
import { Reflector } from '../../pkg/source/kubernetes-reflector.ts';
import type { KubeObject } from '../../pkg/source/source.ts';
import { OBJECT_META, PROTOBUF_CONTENT_TYPE } from '../../pkg/source/kubernetes-protobuf.ts';
import type { ProtoSchema } from '../../pkg/source/kubernetes-protobuf.ts';

const obj = (ns: string, name: string, rv: string): KubeObject => ({ metadata: { name, namespace: ns, resourceVersion: rv } });

t.test('backoff doubles from 0.5 s to 5 s, jitter adds at most 20%, reset starts over', (t) => {
  const low = new Backoff({ random: () => 0 });
  t.same(Array.from({ length: 9 }, () => low.next()), [500, 1000, 2000, 4000, 5000, 5000, 5000, 5000, 5000]);
  t.equal(low.attempts, 9);
  low.reset();
  t.equal(low.attempts, 0);
  t.equal(low.next(), 500);
  const high = new Backoff({ random: () => 0.999999 });
  t.equal(high.next(), 600);
  for (let i = 0; i < 20; i++) high.next();
  t.equal(high.next(), 6000, 'capped base, plus the jitter');
  const random = new Backoff();
  const delays = Array.from({ length: 50 }, () => random.next());
  t.ok(delays.every((d) => d >= 500 && d <= 6000));
  t.ok(new Set(delays.slice(10)).size > 1, 'jittered: replicas do not reconnect in step');
  t.end();
});

t.test('watch events become add/update/delete; a repeated version is no change', (t) => {
  const k = new KnownObjects();
  t.equal(k.watched('ADDED', obj('a', 'x', '1')), 'add');
  t.equal(k.watched('MODIFIED', obj('a', 'x', '2')), 'update');
  t.equal(k.watched('MODIFIED', obj('a', 'x', '2')), null);
  t.equal(k.watched('ADDED', obj('a', 'x', '3')), 'update', 'ADDED for a known object is an update');
  t.equal(k.watched('DELETED', obj('a', 'x', '4')), 'delete');
  t.equal(k.watched('DELETED', obj('a', 'x', '4')), null, 'unknown deletes are dropped');
  t.equal(k.size, 0);
  t.end();
});

t.test('a forgetful kind: events passed on as they come, a relist framed by its hooks instead of diffed', (t) => {
  const calls: string[] = [];
  const k = new ForgetfulObjects({ relisting: () => calls.push('relisting'), relisted: () => calls.push('relisted') });
  t.equal(k.watched('ADDED'), 'add');
  t.equal(k.watched('MODIFIED'), 'update');
  t.equal(k.watched('MODIFIED'), 'update', 'no version kept: every MODIFIED is an update');
  t.equal(k.watched('DELETED'), 'delete');
  const r = k.relist();
  t.same(calls, ['relisting']);
  t.equal(r.item(obj('a', 'x', '1')), 'add');
  t.equal(r.item(obj('a', 'y', '1')), 'add');
  t.same(r.finish(), [], 'no tombstones: the kind drops what was not listed');
  t.same(calls, ['relisting', 'relisted']);
  t.equal(k.size, 2, 'the count of the last list');
  t.end();
});

t.test('a relist diffs against what was known: adds, updates, deletes, nothing for the unchanged', (t) => {
  const k = new KnownObjects();
  for (const [ns, name, rv] of [['a', 'keep', '1'], ['a', 'change', '1'], ['b', 'gone', '1'], ['b', 'gone-too', '1']] as const) k.watched('ADDED', obj(ns, name, rv));
  const r = k.relist();
  t.equal(r.item(obj('a', 'keep', '1')), null);
  t.equal(r.item(obj('a', 'change', '7')), 'update');
  t.equal(r.item(obj('c', 'new', '8')), 'add');
  const gone = r.finish();
  t.same(gone.map((o) => `${o.metadata.namespace}/${o.metadata.name}`).sort(), ['b/gone', 'b/gone-too']);
  t.same(gone[0], { metadata: { name: gone[0].metadata.name, namespace: 'b' } }, 'a tombstone is identity only');
  t.equal(k.size, 3);
  // The next relist starts from the converged state.
  const again = k.relist();
  t.equal(again.item(obj('c', 'new', '8')), null);
  t.same(again.finish().map(objectKey).sort(), ['a/change', 'a/keep']);
  t.equal(k.size, 1);
  t.end();
});

t.test('the first list is all adds; tombstones of names with slashes and without a namespace', (t) => {
  const k = new KnownObjects();
  const r = k.relist();
  t.same([r.item(obj('n', 'a', '1')), r.item(obj('n', 'b', '1'))], ['add', 'add']);
  t.same(r.finish(), []);
  t.same(tombstone('ns/na/me'), { metadata: { name: 'na/me', namespace: 'ns' } });
  t.same(tombstone('/cluster-wide'), { metadata: { name: 'cluster-wide' } });
  t.end();
});

t.test('the watchdog fires once after the limit without activity, and not while poked', (t) => {
  let now = 1000;
  let fired = 0;
  const w = new SilenceWatchdog(100, () => fired++, () => now);
  w.start();
  now += 60;
  w.poke();
  now += 60;
  w.check();
  t.equal(fired, 0, '60 ms since the last poke');
  now += 40;
  w.check();
  t.equal(fired, 1, '100 ms of silence');
  now += 500;
  w.check();
  t.equal(fired, 1, 'fires once per start');
  w.start();
  now += 99;
  w.check();
  t.equal(fired, 1);
  now += 1;
  w.check();
  t.equal(fired, 2, 'started again, fires again');
  w.stop();
  t.end();
});

t.test('the watchdog timer fires on its own; stop() cancels it', async (t) => {
  // The watchdog's timer is unref'd (it must not keep kube-dns alive): hold the loop open meanwhile.
  const hold = setTimeout(() => {}, 10_000);
  t.teardown(() => clearTimeout(hold));
  const fired = await new Promise<boolean>((resolve) => {
    const w = new SilenceWatchdog(20, () => resolve(true));
    w.start();
  });
  t.ok(fired);
  let late = 0;
  const w = new SilenceWatchdog(20, () => late++);
  w.start();
  w.stop();
  await new Promise((r) => setTimeout(r, 60));
  t.equal(late, 0);
});

t.test('--kube-master-url expands $VAR and ${VAR} as Go os.ExpandEnv does', (t) => {
  const env = { HOST: '10.0.0.1', PORT: '443' };
  t.equal(expandEnv('https://$HOST:${PORT}/', env), 'https://10.0.0.1:443/');
  t.equal(expandEnv('https://${MISSING}x$NOPE', env), 'https://x');
  t.equal(expandEnv('https://plain', env), 'https://plain');
  t.end();
});

t.test('watch events split across chunks and packed several to a chunk are each read once', async (t) => {
  // No resourceVersions: a line read twice would show as an extra update rather than be deduplicated.
  const event = (type: string, name: string): string => JSON.stringify({ type, object: { metadata: { name, namespace: 'default' } } }) + '\n';
  const stream = event('ADDED', 'a') + event('ADDED', 'b') + '\n' + event('MODIFIED', 'a') + event('DELETED', 'b');
  const cut = stream.indexOf('"b"') + 2; // inside the second event
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    if (!req.url?.includes('watch=1')) {
      res.end(JSON.stringify({ metadata: { resourceVersion: '1' }, items: [] }));
      return;
    }
    res.write(stream.slice(0, cut));
    setTimeout(() => res.write(stream.slice(cut)), 50);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  server.on('request', (req) => t.teardown(() => req.socket.destroy()));
  const { port } = server.address() as { port: number };
  const client = await connectKube({ masterUrl: `http://127.0.0.1:${port}`, env: {} });
  const seen: string[] = [];
  let done: () => void;
  const four = new Promise<void>((resolve) => (done = resolve));
  const r = new Reflector({
    kind: 'Service',
    paths: ['/api/v1/services'],
    client,
    log: createLogger('test-reflector'),
    pageSize: 500,
    silentWatchMs: 60_000,
    onChange: (change, o, watched) => {
      if (watched) seen.push(`${change} ${o.metadata.name}`);
      if (seen.length === 4) done();
    },
    onBatch: () => {},
    onListed: () => {},
  });
  t.teardown(() => r.stop());
  r.start();
  await four; // the chunk that completes the fourth event is read to its end before this resumes
  t.same(seen, ['add a', 'add b', 'update a', 'delete b']);
});

/**
 * A test double of the API server (a real one cannot be made to send a bad line or an ERROR event
 * mid-stream, or to hang a list): `watch` writes the watch response body and keeps it open; `list`
 * answers the list, or never does when it returns false.
 */
async function apiDouble(t: Test, o: { list?: (res: ServerResponse, req: IncomingMessage) => boolean; watch: (res: ServerResponse, n: number) => void }): Promise<{ port: number; lists: () => number }> {
  let lists = 0;
  let watches = 0;
  const server = createServer((req, res) => {
    if (!req.url?.includes('watch=1')) {
      lists++;
      if (o.list && !o.list(res, req)) return;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ metadata: { resourceVersion: '1' }, items: [] }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    o.watch(res, ++watches);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.on('request', (req) => t.teardown(() => req.socket.destroy()));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.address() as { port: number }).port, lists: () => lists };
}

/** A Reflector on the double; what it delivers, in order ("add a", "batch"). */
async function reflect(t: Test, port: number, silentWatchMs = 60_000, protobuf?: ProtoSchema): Promise<{ calls: string[]; listed: string[]; reflector: Reflector }> {
  const client = await connectKube({ masterUrl: `http://127.0.0.1:${port}`, env: {} });
  const calls: string[] = [];
  const listed: string[] = [];
  const reflector = new Reflector({
    kind: 'Service',
    paths: ['/api/v1/services'],
    protobuf,
    client,
    log: createLogger('test-reflector'),
    pageSize: 500,
    silentWatchMs,
    backoff: { initialMs: 50, maxMs: 50 },
    onChange: (change, o, watched) => {
      (watched ? calls : listed).push(`${change} ${o.metadata.name}`);
    },
    onBatch: () => {
      if (calls.length > 0 && calls.at(-1) !== 'batch') calls.push('batch');
    },
    onListed: () => {},
  });
  t.teardown(() => reflector.stop());
  reflector.start();
  return { calls, listed, reflector };
}

const line = (type: string, name: string, rv: string): string => JSON.stringify({ type, object: { metadata: { name, namespace: 'default', resourceVersion: rv } } }) + '\n';

for (const [what, bad] of [
  ['an ERROR event', JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 500, message: 'etcd leader changed' } }) + '\n'],
  ['an unparsable line', '{"type":"ADDED","object":\n'],
] as const) {
  t.test(`${what} after good events in one chunk: the good events reach the sink in a batch of their own`, async (t) => {
    const api = await apiDouble(t, { watch: (res, n) => n === 1 && res.write(line('ADDED', 'a', '2') + line('ADDED', 'b', '3') + bad) });
    const { calls } = await reflect(t, api.port);
    await eventually(() => calls.length >= 2, 'the events before the bad line', 3000);
    await new Promise((r) => setTimeout(r, 300)); // the retry has long started
    t.same(calls, ['add a', 'add b', 'batch'], 'flushed, not left waiting for a later batch');
  });
}

t.test('a list that never answers is given up after the silence limit and tried again', async (t) => {
  const api = await apiDouble(t, { list: () => api.lists() > 1, watch: (res) => res.write(line('ADDED', 'a', '2')) });
  const { calls } = await reflect(t, api.port, 400);
  await eventually(() => calls.includes('batch'), 'listed on the second try, then watching', 5000);
  t.equal(api.lists(), 2, 'the hung list was abandoned, not waited on forever');
});

t.test('a kind with protobuf fields lists in protobuf; a protobuf list it cannot read turns it to JSON, and nothing is lost', async (t) => {
  const accepts: string[] = [];
  const api = await apiDouble(t, {
    list: (res, req) => {
      accepts.push(req.headers.accept ?? '');
      if (!req.headers.accept?.startsWith(PROTOBUF_CONTENT_TYPE)) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ metadata: { resourceVersion: '1' }, items: [{ metadata: { name: 'a', namespace: 'default', resourceVersion: '1' } }] }));
        return false;
      }
      // What no API server sends: the envelope, then a field that runs past the body.
      res.writeHead(200, { 'content-type': PROTOBUF_CONTENT_TYPE });
      res.end(Buffer.from([0x6b, 0x38, 0x73, 0x00, 0x12, 0x7f, 0x0a]));
      return false;
    },
    watch: () => {},
  });
  const { listed } = await reflect(t, api.port, 60_000, { 1: ['metadata', 'message', OBJECT_META] });
  await eventually(() => listed.includes('add a'), 'the list read in JSON after the protobuf one failed', 5000);
  t.same(accepts, [`${PROTOBUF_CONTENT_TYPE}, application/json`, 'application/json']);
});
