// pkg/dns's Fairness, its windows stepped by the test and its busy fraction given: nothing limited
// while the thread has room; once busy, max-min fair shares of the misses (an asker under its share
// keeps all it asks), the limited asker named once when it starts and once when it stops, sharing
// ended after a calm second; slots shared while an upstream's answers are awaited; the asker read
// from a trusted cache's Client Subnet only.

import t from 'tap';
import { Fairness, PRESSED_WINDOWS, QUEUED_WINDOWS, WARM_WINDOWS } from '../../pkg/dns/fairness.ts';
import type { Asker } from '../../pkg/dns/fairness.ts';
import type { Test } from 'tap';
import { emptyOptView } from '../../pkg/dns/question.ts';
import { FlowSteering } from '../../pkg/dns/udp-steer.ts';

/**
 * A Fairness whose windows the test ends (f.tick()), its asks made late in each window (the whole
 * share paced in), its busy fraction `state.busy`; past a fresh thread's first windows (WARM_WINDOWS
 * in which two askers missed, since forgotten) unless `fresh`.
 */
function stepped(extra: Partial<ConstructorParameters<typeof Fairness>[0]> = {}, { fresh = false } = {}) {
  const state = { busy: 0.2, ms: 0 };
  const events: [string, boolean][] = [];
  const f = new Fairness({ windowMs: 1000, floorPerSecond: 0, busy: () => state.busy, now: () => state.ms, onLimited: (a: Asker, on: boolean) => events.push([a.address, on]), ...extra });
  t.teardown(() => f.close());
  const tick = f.tick.bind(f);
  f.tick = () => {
    tick();
    state.ms += 1000;
  };
  state.ms = 1000;
  if (!fresh) {
    for (let w = 0; w < WARM_WINDOWS; w++) {
      ask(f, 'warm-up-1', 1);
      ask(f, 'warm-up-2', 1);
      f.tick();
    }
    for (let w = 0; w <= 10; w++) f.tick();
  }
  return { f, state, events };
}

/** `n` misses of `address` in this window: how many were admitted. */
function ask(f: Fairness, address: string, n: number): number {
  let admitted = 0;
  for (let i = 0; i < n; i++) if (f.admit(address) !== null) admitted++;
  return admitted;
}

/**
 * Eight askers (127.0.0.11-18, as bench:miss-cost's): `round(busy, demands)` asks each its demand
 * (one for all, or one each), ends the window at that busy fraction and says how many were admitted.
 */
function eightAskers(f: Fairness, state: { busy: number }) {
  const askers = Array.from({ length: 8 }, (_, i) => `127.0.0.${11 + i}`);
  return (busy: number, demands: number | number[]): number => {
    state.busy = busy;
    let admitted = 0;
    askers.forEach((a, i) => (admitted += ask(f, a, typeof demands === 'number' ? demands : demands[i])));
    f.tick();
    return admitted;
  };
}

/** Eight askers (eightAskers) on a thread whose watched port's queue the test sets (`queue.queued`). */
function eightWithQueue(opts: { fresh?: boolean } = {}) {
  const queue = { queued: 0, drops: 0 };
  const { f, state, events } = stepped({ backlog: () => ({ ...queue }) }, opts);
  f.watch(5353, 4096);
  return { f, events, queue, round: eightAskers(f, state) };
}

/** Twelve windows of 250 misses each at `busy`: every one admitted, nothing dropped, sharing over, nobody named. */
function settlesUncut(t: Test, f: Fairness, round: ReturnType<typeof eightAskers>, busy: number, events: unknown[]): void {
  for (let w = 0; w < 12; w++) t.equal(round(busy, 250), 2000, `window ${w + 1}: every miss admitted`);
  t.equal(f.stats.dropped, 0);
  t.notOk(f.shared, 'not shared, or no longer');
  t.same(events, [], 'nobody named');
}

t.test('alone, an asker is never limited, however busy it keeps the thread', async (t) => {
  const { f, state, events } = stepped();
  state.busy = 1;
  for (let w = 0; w < 5; w++) {
    t.equal(ask(f, '127.0.0.1', 5000), 5000);
    f.tick();
  }
  t.same(events, []);
});

t.test('with room to spare every miss is admitted, however many one asker sends', async (t) => {
  const { f, events } = stepped();
  for (let w = 0; w < 5; w++) {
    t.equal(ask(f, '10.0.0.66', 5000), 5000);
    f.tick();
  }
  t.notOk(f.shared);
  t.same(events, []);
  t.equal(f.stats.dropped, 0);
});

t.test('busy: the flooder is held to what is left, the others keep all they ask; named when limited and when let go', async (t) => {
  const { f, state, events } = stepped();
  const good = ['10.0.0.1', '10.0.0.2', '10.0.0.3'];
  state.busy = 0.95;
  ask(f, '10.0.0.66', 3000);
  for (const g of good) ask(f, g, 50);
  f.tick();
  t.ok(f.shared, 'busy past 0.9: shared');
  // Capacity: 3150 admitted × 0.9/0.95 ≈ 2984; the three under it keep their 50 each, the flooder ~2834.
  t.ok(f.share > 2700 && f.share < 2900, `the flooder's share: what the others leave (${f.share})`);
  state.busy = 0.9;
  for (let w = 0; w < 3; w++) {
    const share = f.share;
    t.equal(ask(f, '10.0.0.66', 20000), share, `held to its share (${share})`);
    for (const g of good) t.equal(ask(f, g, 50), 50, `${g}: every miss admitted`);
    f.tick();
  }
  t.same(events, [['10.0.0.66', true]], 'the flooder named once, when first limited');
  t.same(f.limited().map((a) => a.address), ['10.0.0.66']);
  t.ok(f.stats.dropped > 50000);

  // The flood ends: no drop for a second (10 windows), sharing ends and the flooder is let go.
  state.busy = 0.3;
  for (let w = 0; w < 10; w++) {
    for (const g of good) ask(f, g, 50);
    f.tick();
  }
  t.notOk(f.shared, 'a calm second: no longer shared');
  t.same(events, [['10.0.0.66', true], ['10.0.0.66', false]], 'and named when let go');
  t.same(f.limited(), []);
});

t.test("a load's start, the miss path not yet compiled: its saturated windows and the catch-up after them cut nobody", async (t) => {
  // As kube-dns logged it under bench:miss-cost: eight askers at 2,500 misses a second each (250 a
  // window), started one after another, the first misses uncompiled (a window 100 % busy, the queue
  // backing up), then catching up on their rate; 78 % busy once warm. Shares set from the cold
  // windows cut every asker in the catch-up, and each client's window filled with the drops: 1,600 lost.
  const { f, events, queue, round } = eightWithQueue({ fresh: true });
  round(0.6, [148, 114, 94, 67, 0, 0, 0, 0]);
  queue.queued = 2048;
  round(1, [166, 166, 166, 166, 160, 104, 49, 15]);
  queue.queued = 0;
  t.equal(round(0.84, [274, 273, 273, 295, 294, 302, 401, 406]), 2518, 'the catch-up: every miss admitted');
  settlesUncut(t, f, round, 0.78, events);
});

t.test('a fresh thread under a flood: shared after its first windows beside other askers, at once alone', async (t) => {
  const beside = stepped({}, { fresh: true });
  const good = ['10.0.0.1', '10.0.0.2', '10.0.0.3'];
  beside.state.busy = 1;
  for (let w = 0; w < WARM_WINDOWS; w++) {
    t.equal(ask(beside.f, '10.0.0.66', 5000), 5000, `window ${w + 1}: every miss admitted`);
    for (const g of good) ask(beside.f, g, 50);
    beside.f.tick();
  }
  t.notOk(beside.f.shared, `not shared from the first ${WARM_WINDOWS}`);
  ask(beside.f, '10.0.0.66', 5000);
  for (const g of good) ask(beside.f, g, 50);
  beside.f.tick();
  t.ok(beside.f.shared, 'shared from the next');
  t.ok(ask(beside.f, '10.0.0.66', 5000) < 5000, 'the flooder held to its share');
  for (const g of good) t.equal(ask(beside.f, g, 50), 50, `${g}: every miss admitted`);
  t.same(beside.events, [['10.0.0.66', true]]);

  // Alone, filling the queue: shared from its first window (its flows steered at once).
  const queue = { queued: 2048, drops: 0 };
  const alone = stepped({ backlog: () => ({ ...queue }) }, { fresh: true });
  alone.f.watch(5353, 4096);
  alone.state.busy = 1;
  ask(alone.f, '10.0.0.66', 5000);
  alone.f.tick();
  t.ok(alone.f.shared && alone.f.share < 5000, `alone: shared from its first window (share ${alone.f.share})`);
});

t.test('one window past busy in a load of equal askers cuts nobody while the queue keeps up', async (t) => {
  // As logged in the same bench's second round: eight equal askers at ~70 % busy, one window at 0.91
  // (a collection, another process), the next at 0.98 while the askers caught up on its delay. The
  // share set from the first (208 of 250) cut all eight, and each drop filled its client's window.
  const { f, state, events } = stepped();
  const round = eightAskers(f, state);
  round(0.68, 248);
  round(0.91, 211);
  t.ok(f.shared, 'shared');
  t.equal(round(0.98, 289), 8 * 289, 'the catch-up: every miss admitted');
  settlesUncut(t, f, round, 0.7, events);
});

t.test('after a window with room, askers catching up over a share that every demand fitted are not cut', async (t) => {
  // As bench:miss-cost logged it: shared from the last cold window (all alike: no share), then a
  // share of the largest demand and a tenth (273) set at 0.78 busy; the askers catch up on the next
  // window's delay (302 each) and were cut by 41 each, their clients stalled: 338 lost.
  const { f, state, events } = stepped();
  const round = eightAskers(f, state);
  round(1, [334, 334, 335, 334, 348, 334, 357, 344]);
  t.ok(f.shared, 'shared');
  round(0.77, Array(8).fill(298));
  round(0.78, Array(8).fill(248));
  t.ok(f.share < 302, `a share every demand fitted (${f.share})`);
  t.equal(round(0.9, Array(8).fill(302)), 8 * 302, 'the catch-up after a window with room: every miss admitted');
  settlesUncut(t, f, round, 0.64, events);
});

t.test('a window in which the thread was held, its queue backing up, cuts nobody as the askers catch up', async (t) => {
  // As bench:miss-cost logged it: eight askers at 250 a window, 80 % busy; then a window 100 % busy
  // with 96 misses each read and the queue backed up (the thread held by something else), then 227
  // each as they caught up. The share set from the held window (68) dropped 200 of each: 1,600 lost.
  const { f, events, queue, round } = eightWithQueue();
  round(0.8, 248);
  queue.queued = 2048;
  round(1, 96);
  queue.queued = 0;
  t.ok(f.shared, 'shared');
  t.equal(round(0.34, 227), 8 * 227, 'the catch-up: every miss admitted');
  settlesUncut(t, f, round, 0.7, events);
});

t.test('a window in which the thread was held and the catch-up after it, both backing the queue up, cut nobody as the askers catch up further', async (t) => {
  // As bench:miss-cost logged it (2026-11-29): eight askers at 250 a window, half busy; a window with
  // 88 each read, 0.94 busy, the queue backed up; the next 100 % busy with 256 each, the queue backed
  // up again; a share of 180 set from it dropped 200 of each of the 361 they asked next: 1,600 lost.
  const { f, events, queue, round } = eightWithQueue();
  round(0.5, 250);
  round(0.5, 250);
  queue.queued = 2048;
  round(0.94, 88);
  round(1, 256);
  queue.queued = 0;
  t.equal(round(0.88, 361), 8 * 361, 'the catch-up: every miss admitted');
  settlesUncut(t, f, round, 0.5, events);
});

t.test("a fresh thread's slow first windows, its queue backing up in two, cut nobody as the askers catch up", async (t) => {
  // As logged (2026-11-29): a window of two askers, then eight 100 % busy with 800 misses read and the
  // queue backed up, then 231 each, backed up again; the share set then (166) cut the next 305 each.
  const { f, events, queue, round } = eightWithQueue({ fresh: true });
  round(0.32, [31, 1, 0, 0, 0, 0, 0, 0]);
  queue.queued = 2048;
  round(1, [147, 137, 131, 100, 100, 100, 100, 85]);
  round(1, 231);
  queue.queued = 0;
  t.equal(round(0.6, 305), 8 * 305, 'the catch-up: every miss admitted');
  settlesUncut(t, f, round, 0.6, events);
});

t.test('a slow window just past busy, whose level falls among equal demands, cuts nobody as the askers catch up', async (t) => {
  // As logged (2026-11-29): eight equal askers, shared from their cold start; a window at 0.90 busy in
  // which only 155 each were read (a miss cost twice what it had) set a share of 155, and the 337 each
  // they asked next were cut to 138.
  const { f, state, events } = stepped({}, { fresh: true });
  const round = eightAskers(f, state);
  round(0.94, [117, 103, 98, 64, 50, 40, 30, 10]);
  round(1, 280);
  round(1, 320);
  round(0.89, 282);
  round(0.85, 246);
  round(0.901, [154, 155, 155, 155, 155, 155, 155, 156]);
  t.equal(round(0.75, 337), 8 * 337, 'the catch-up: every miss admitted');
  settlesUncut(t, f, round, 0.7, events);
});

t.test('after a window with room, an asker asking twice its share is cut', async (t) => {
  const { f, state, events } = stepped();
  state.busy = 0.95;
  ask(f, 'a', 100);
  ask(f, 'b', 300);
  f.tick();
  state.busy = 0.5;
  ask(f, 'a', 100);
  ask(f, 'b', 100);
  f.tick();
  const share = f.share;
  t.ok(f.shared && share < 500, `shared, with room (share ${share})`);
  t.equal(ask(f, 'c', 5000), 2 * share, 'a new asker: admitted up to twice the share');
  t.same(events, [['c', true]]);
});

t.test("a TCP flood's burst read alone in its window is shared, though the others missed in the window before", async (t) => {
  // dnsperf over TCP frees its window once a second: ~1,000 frames read in one go, before any other
  // asker's datagram. Alone with misses in that window, the flooder still is not alone.
  const { f, state, events } = stepped();
  const good = ['10.0.0.1', '10.0.0.2', '10.0.0.3'];
  state.busy = 0.5;
  for (const g of good) ask(f, g, 12);
  f.tick();
  state.busy = 1;
  t.equal(ask(f, '10.0.0.66', 1000), 1000, 'its first burst, unshared');
  f.tick();
  t.ok(f.share < 1000, `shared (share ${f.share})`);
  t.ok(ask(f, '10.0.0.66', 1000) < 1000, 'its next burst cut');
  t.same(events, [['10.0.0.66', true]]);
});

t.test('shared, with room to spare, an asker asking a little more each window is not cut, and sharing ends', async (t) => {
  const { f, state, events } = stepped();
  state.busy = 0.95;
  ask(f, 'a', 100);
  ask(f, 'b', 300);
  f.tick();
  t.ok(f.share < 300, `busy past 0.9: shared, b's share under what it asked (${f.share})`);
  // The thread has room again and one asker grows by a miss a window. A share set to the last
  // window's largest demand cut it by one every window, and each drop kept sharing on for ever.
  state.busy = 0.5;
  for (let w = 1; w <= 14; w++) {
    t.equal(ask(f, 'a', 100 + w), 100 + w, `window ${w}: all ${100 + w} admitted`);
    ask(f, 'b', 100);
    f.tick();
  }
  t.notOk(f.shared, 'a calm second: no longer shared');
  t.equal(f.stats.dropped, 0, 'nothing dropped');
  t.same(events, [], 'nobody named: nobody was cut');
});

t.test('saturated, the queue backing up: the shares shrink by a third a window, never under the floor', async (t) => {
  // Askers alike, every one over what the thread can take: shared evenly once the queue has backed up
  // (the kernel dropping) PRESSED_WINDOWS running.
  const queue = { queued: 0, drops: 0 };
  const { f, state } = stepped({ floorPerSecond: 30, backlog: () => ({ ...queue }) });
  f.watch(5353, 4096);
  state.busy = 1;
  const window = () => {
    ask(f, 'a', 1000);
    ask(f, 'b', 1000);
    queue.drops++;
    f.tick();
  };
  for (let w = 1; w < PRESSED_WINDOWS; w++) {
    window();
    t.equal(f.share, Infinity, `${w} window(s) of it: not yet`);
  }
  window();
  const first = f.share;
  t.ok(first <= 1000 && first >= 400, `an even split of what it could take (${first})`);
  for (let w = 0; w < 10; w++) {
    const before = f.share;
    window();
    t.ok(f.share === Math.max(30, Math.ceil(before * 0.7)) || f.share === Math.max(30, Math.ceil(before * 0.7) + 1), `${before} → ${f.share}`);
  }
  t.equal(f.share, 30, 'down to the floor (30 a window)');
});

t.test('slots: once that many misses await an upstream, each asker gets its part of them', async (t) => {
  const { f, state } = stepped({ slots: 4 });
  state.busy = 0.1;
  const held: Asker[] = [];
  for (let i = 0; i < 4; i++) {
    const a = f.admit('10.0.0.66')!;
    f.started(a);
    held.push(a);
  }
  const other = f.admit('10.0.0.1')!;
  f.started(other);
  f.tick();
  t.ok(f.shared, 'every slot taken: shared');
  t.equal(f.admit('10.0.0.66'), null, 'the asker holding most of them waits for its own');
  t.not(f.admit('10.0.0.2'), null, 'another asker is admitted');
  for (const a of held) f.finished(a, 0);
  f.finished(other, 0);
});

t.test('slots: an asker alone holding every slot is not dropped: the upstream limit answers it (REFUSED), as without shares', async (t) => {
  const { f, state } = stepped({ slots: 1 });
  state.busy = 0.1;
  const a = f.admit('127.0.0.1')!;
  f.started(a);
  f.tick();
  t.not(f.admit('127.0.0.1'), null, 'nobody else waits: admitted, for the forwarder to refuse');
  f.finished(a, 0);
});

/**
 * An upstream that answers in order: `ask` forwards an asker's misses (those admitted), `answer`
 * answers the `n` that waited longest, `ms` from now (the clock moved on).
 */
function upstreamOf(f: Fairness, state: { ms: number }) {
  const waiting: { a: Asker; since: number }[] = [];
  return {
    ask(address: string, n: number): number {
      let admitted = 0;
      for (let i = 0; i < n; i++) {
        const a = f.admit(address);
        if (a === null) continue;
        admitted++;
        waiting.push({ a, since: f.started(a) });
      }
      return admitted;
    },
    answer(n: number, ms: number): void {
      state.ms += ms;
      for (const w of waiting.splice(0, n)) f.finished(w.a, w.since);
    },
    get inflight() {
      return waiting.length;
    },
  };
}

t.test("slots: while the upstream's answers queue, an asker with most of them in flight is held to its part, even alone", async (t) => {
  const { f, state } = stepped({ slots: 5000 });
  state.busy = 0.1;
  const up = upstreamOf(f, state);
  for (let w = 0; w < 3; w++) {
    up.ask('10.0.0.1', 5);
    up.answer(5, 1);
    f.tick();
  }
  t.equal(up.ask('10.0.0.66', 1000), 1000, 'a pipelined flood: every miss forwarded, the thread idle and 5,000 slots');
  f.tick();
  for (let w = 0; w < QUEUED_WINDOWS; w++) {
    // Answered a window or more after they were asked: the upstream works through a queue.
    up.answer(100, 0);
    f.tick();
  }
  t.ok(f.slotLimit < up.inflight, `the slots shared from fewer than are in flight (${f.slotLimit} of ${up.inflight})`);
  t.equal(up.ask('10.0.0.66', 10), 0, 'the flooder, alone in waiting, is not given more');
  t.equal(up.ask('10.0.0.2', 1), 1, 'another asker is');
  up.answer(up.inflight, 0);
  for (let w = 0; w < 12; w++) f.tick();
  t.equal(f.slotLimit, 5000, 'the queue gone: every slot again, a quarter more a window');
  t.equal(up.ask('10.0.0.66', 10), 10, 'and the flooder is given them');
});

t.test('slots: many in flight, answered as fast as ever: nobody held', async (t) => {
  const { f, state } = stepped({ slots: 5000 });
  state.busy = 0.1;
  const up = upstreamOf(f, state);
  for (let w = 0; w < 10; w++) {
    t.equal(up.ask('10.0.0.66', 1000), 1000, `window ${w + 1}: every miss forwarded`);
    up.ask('10.0.0.1', 5);
    up.answer(1005, 1);
    f.tick();
  }
  t.equal(f.slotLimit, 5000);
  t.equal(f.stats.dropped, 0);
});

t.test("the asker: a trusted cache's Client Subnet, else the packet's source", async (t) => {
  const f = new Fairness({ trustsSubnetOf: (a) => a === '127.0.0.1', windowMs: 1000 });
  t.teardown(() => f.close());
  const view = emptyOptView();
  const req = new Uint8Array(64);
  req.set([10, 244, 1, 7], 40);
  Object.assign(view, { ecsFamily: 1, ecsSourcePrefix: 32, ecsAddressAt: 40, ecsAddressLength: 4 });
  t.equal(f.askerOf(req, '127.0.0.1', view), '10.244.1.7', 'from our cache on loopback: the pod it asks for');
  t.equal(f.askerOf(req, '10.244.9.9', view), '10.244.9.9', 'from anyone else: its own address, whatever subnet it claims');
  Object.assign(view, { ecsSourcePrefix: 24, ecsAddressLength: 3 });
  t.equal(f.askerOf(req, '127.0.0.1', view), '10.244.1.0', "a /24 after a /32: the prefix's bytes, the rest zero");
  view.ecsFamily = 0;
  t.equal(f.askerOf(req, '127.0.0.1', view), '127.0.0.1', 'no subnet: the source');
});

t.test('a spoofed flood of new addresses is tracked in a bounded table', async (t) => {
  const { f } = stepped();
  for (let i = 0; i < 20000; i++) f.admit(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`);
  t.equal(f.askersTracked, 10001, '10,000 askers, the rest as one');
  // The window they missed in, then ten without a miss.
  for (let w = 0; w < 11; w++) f.tick();
  t.equal(f.askersTracked, 0, 'forgotten after a second without a miss');
});

t.test('a share is paced over its window: a tenth of it (or the floor) at its start, all of it at its end', async (t) => {
  const { f, state } = stepped();
  state.busy = 0.95;
  ask(f, 'a', 1000);
  ask(f, 'b', 100);
  f.tick();
  const share = f.share;
  state.ms -= 1000; // the window's start
  t.equal(ask(f, 'a', 1000), Math.ceil(share * 0.1), `a tenth of ${share} at once`);
  state.ms += 500;
  t.equal(ask(f, 'a', 1000), Math.ceil(share * 0.55) - Math.ceil(share * 0.1), 'more as the window goes on');
});

t.test("the port's queue backing up: an asker alone is held too, so whoever comes next can be heard", async (t) => {
  const queue = { queued: 0, drops: 0 };
  const { f, state, events } = stepped({ backlog: (port: number) => (port === 5353 ? { ...queue } : null) });
  f.watch(5353, 4096);
  state.busy = 1;
  t.equal(ask(f, '10.0.0.66', 5000), 5000);
  f.tick();
  t.equal(ask(f, '10.0.0.66', 5000), 5000, 'alone, its queue short: every miss admitted, however busy');
  queue.queued = 1024;
  f.tick();
  t.ok(f.share < 5000, `a quarter of the buffer queued: limited, alone (share ${f.share})`);
  t.ok(ask(f, '10.0.0.66', 5000) < 5000);
  t.same(events, [['10.0.0.66', true]]);
  queue.queued = 0;
  queue.drops = 7;
  f.tick();
  t.ok(f.share < Infinity, 'datagrams dropped by the kernel: still shared');
});

t.test("another thread's misses backing up on this one (behind()): an asker alone is held, as for a port's queue; told while the thread has time to spare, nobody is", async (t) => {
  const { f, state, events } = stepped();
  state.busy = 0.3;
  ask(f, '10.0.0.66', 5000);
  f.behind();
  f.tick();
  t.equal(ask(f, '10.0.0.66', 5000), 5000, 'told while the thread is not busy: every miss admitted');
  state.busy = 1;
  f.tick();
  t.equal(ask(f, '10.0.0.66', 5000), 5000, 'busy, nobody behind: alone, every miss admitted');
  f.behind();
  f.tick();
  t.ok(f.share < 5000, `busy and behind: limited, alone (share ${f.share})`);
  t.ok(ask(f, '10.0.0.66', 5000) < 5000);
  t.same(events, [['10.0.0.66', true]]);
});

t.test('while shared, an asker under the floor keeps every miss however they fall into windows', async (t) => {
  const state = { ms: 0 };
  const events: [string, boolean][] = [];
  const f = new Fairness({ windowMs: 100, floorPerSecond: 200, busy: () => 1, now: () => state.ms, onLimited: (a: Asker, on: boolean) => events.push([a.address, on]) });
  t.teardown(() => f.close());
  const window = (bursty: number) => {
    state.ms += 99;
    ask(f, '10.0.0.66', 5000);
    const admitted = ask(f, '10.0.0.1', bursty);
    state.ms += 1;
    f.tick();
    return admitted;
  };
  for (let w = 0; w <= WARM_WINDOWS; w++) window(1); // past a fresh thread's first windows
  t.ok(f.shared, 'shared');
  // 125 a second, in bursts: 50 in one window (a window's floor: 20), nothing in the next three.
  let admitted = 0;
  for (let w = 0; w < 40; w++) admitted += window(w % 4 === 0 ? 50 : 0);
  t.ok(f.share < 1000, `the flooder held (share ${f.share})`);
  t.equal(admitted, 10 * 50, 'the bursty asker lost nothing');
  t.same(events, [['10.0.0.66', true]]);
});

t.test('an asker alone limited for its queue stays limited while it floods: its queue drained by the limit is no sign the flood stopped', async (t) => {
  const queue = { queued: 0, drops: 0 };
  const { f, state, events } = stepped({ backlog: () => ({ ...queue }) });
  f.watch(5353, 4096);
  state.busy = 1;
  ask(f, '10.0.0.66', 5000);
  queue.queued = 2048;
  f.tick();
  t.ok(f.share < 5000, `limited for the queue (share ${f.share})`);
  queue.queued = 0;
  state.busy = 0.95;
  for (let w = 0; w < 5; w++) {
    t.ok(ask(f, '10.0.0.66', 5000) < 5000, `window ${w + 1}, the queue empty: still held to its share`);
    f.tick();
  }
  t.same(events, [['10.0.0.66', true]], 'limited once, not let go while it floods');
  for (let w = 0; w < 10; w++) {
    state.busy = 0.1;
    ask(f, '10.0.0.66', 1);
    f.tick();
  }
  t.notOk(f.shared, 'a calm second after the flood stopped: sharing ends');
  t.equal(ask(f, '10.0.0.66', 5000), 5000, 'and it is let back in whole');
  t.same(events, [['10.0.0.66', true], ['10.0.0.66', false]]);
});

t.test("after a busy window the queues are glanced at within the next, unless a read of them takes 1 ms or more (the kernel walks its whole UDP table: a node's with 1,000 sockets, 2.7 ms)", async (t) => {
  for (const [readMs, glances] of [[0.5, 3], [2, 0]]) {
    let reads = 0;
    // Windows of a second (glances 250, 500 and 750 ms into one); each read advances the clock by readMs.
    const { f, state } = stepped({ backlog: () => ((reads++, (state.ms += readMs)), { queued: 0, drops: 0 }) });
    f.watch(5353, 4096, new FlowSteering({ open: () => null }));
    state.busy = 0.6;
    f.tick();
    // Idle from here: the window's own timer, should it end one, reads nothing.
    state.busy = 0;
    const atEnd = reads;
    await new Promise((r) => setTimeout(r, 900));
    t.equal(reads - atEnd, glances, `a read of ${readMs} ms: ${glances} glances`);
    f.close();
  }
});
