// pkg/dns's FlowSteering with the queues it opens recorded: only a flow that lost 50 misses in a
// window while the port's queue backed up gets a queue of its own, the most dropped first, 16 at most;
// back when its asker is let go or sharing ends. A steered flow's queue is not read from its first
// miss dropped in a window to the window's end; a TCP connection held likewise.

import t from 'tap';
import { FlowSteering, MAX_FLOWS } from '../../pkg/dns/udp-steer.ts';

function recorded(refuse = false) {
  const open = new Set<string>();
  /** Queues not read now, and calls on a queue closed already. */
  const paused = new Set<string>();
  const afterClose: string[] = [];
  const steering = new FlowSteering({
    open: (address, port) => {
      if (refuse) return null;
      const key = `${address}:${port}`;
      open.add(key);
      const live = (what: string) => open.has(key) || afterClose.push(`${what} ${key}`) === 0;
      return {
        close: () => open.delete(key),
        pause: () => live('pause') && paused.add(key),
        resume: () => live('resume') && paused.delete(key),
      };
    },
  });
  return { steering, open, paused, afterClose };
}

const drop = (s: FlowSteering, address: string, port: number, n: number) => {
  for (let i = 0; i < n; i++) s.dropped(address, port);
};

t.test('steered: a flow with 50 drops in a window while the queue backs up; not without the backlog, not under 50', async (t) => {
  const { steering, open } = recorded();
  drop(steering, '10.0.0.66', 4000, 500);
  steering.window(false);
  t.same([...open], [], 'the queue short: nothing steered, however many drops');
  drop(steering, '10.0.0.66', 4000, 500);
  drop(steering, '10.0.0.7', 5353, 49);
  steering.window(true);
  t.same([...open], ['10.0.0.66:4000'], 'the flood steered; a flow under 50 drops stays');
  t.equal(steering.size, 1);
  drop(steering, '10.0.0.66', 4000, 500);
  steering.window(true);
  t.equal(steering.size, 1, 'a flow steered already is not opened twice');
  drop(steering, '10.0.0.66', 4001, 60);
  steering.window(true);
  t.same([...open].sort(), ['10.0.0.66:4000', '10.0.0.66:4001'], "the asker's other flow too");
  steering.release('10.0.0.66');
  t.same([...open], [], 'its asker let go: every flow of it back');
  t.equal(steering.size, 0);
});

t.test(`at most ${MAX_FLOWS} flows, the most dropped first; a flow that cannot be opened is not counted`, async (t) => {
  const { steering, open } = recorded();
  for (let p = 0; p < 40; p++) drop(steering, '10.0.0.66', 1000 + p, 50 + p);
  steering.window(true);
  t.equal(open.size, MAX_FLOWS);
  t.ok(open.has('10.0.0.66:1039') && !open.has('10.0.0.66:1000'), 'the most dropped ones');
  steering.releaseAll();
  t.equal(open.size, 0, 'sharing over: all back');
  const refusing = recorded(true);
  drop(refusing.steering, '10.0.0.66', 4000, 100);
  refusing.steering.window(true);
  t.equal(refusing.steering.size, 0);
});

const miss = (s: FlowSteering, address: string, port: number, n: number) => {
  for (let i = 0; i < n; i++) s.missed(address, port);
};

t.test("a flow that made half the window's misses or more (50 at least) is steered as the queue first backs up, before any of it was dropped; misses are counted only in windows that follow a busy one", async (t) => {
  const { steering, open } = recorded();
  miss(steering, '10.0.0.66', 4000, 500);
  steering.window(true, true);
  t.same([...open], [], 'not counted in a window after one that was not busy');
  miss(steering, '10.0.0.66', 4000, 500);
  miss(steering, '10.0.0.7', 5353, 60);
  steering.window(false, true);
  t.same([...open], [], 'the queue short: nothing steered');
  miss(steering, '10.0.0.66', 4000, 500);
  miss(steering, '10.0.0.7', 5353, 60);
  steering.window(true, true);
  t.same([...open], ['10.0.0.66:4000'], 'the queue backing up: the flow that made most misses steered; another of 60 stays');
  for (let a = 1; a <= 8; a++) miss(steering, `10.0.1.${a}`, 5000, 250);
  steering.window(true, false);
  t.same([...open], ['10.0.0.66:4000'], 'eight askers alike: none made half the misses, none steered');
  miss(steering, '10.0.0.9', 6000, 500);
  steering.window(true, true);
  t.same([...open], ['10.0.0.66:4000'], 'not counted in a window after one that was not busy');
  miss(steering, '10.0.0.70', 7000, 500);
  drop(steering, '10.0.0.70', 7000, 100);
  steering.window(true, false);
  t.same([...open].sort(), ['10.0.0.66:4000', '10.0.0.70:7000'], 'a flow both dropped and missed is opened once');
  t.equal(steering.size, 2);
});

t.test('a spoofed flood from ever new ports is counted in a bounded table', async (t) => {
  const { steering, open } = recorded();
  for (let p = 0; p < 5000; p++) steering.dropped(`10.0.${p % 250}.1`, p);
  steering.window(true);
  t.equal(open.size, 0, 'no flow among them dropped 50 times');
});

t.test("a steered flow's queue is not read from its first miss dropped in a window to the window's end", async (t) => {
  const { steering, paused, afterClose } = recorded();
  drop(steering, '10.0.0.66', 4000, 60);
  steering.window(true);
  t.same([...paused], [], 'steered: read');
  steering.dropped('10.0.0.66', 4000);
  t.same([...paused], ['10.0.0.66:4000'], 'a miss of it dropped over its share: not read (the kernel drops the rest)');
  steering.dropped('10.0.0.7', 5353);
  steering.dropped('10.0.0.66', 4001);
  t.same([...paused], ['10.0.0.66:4000'], 'flows without a queue of their own are read as ever');
  steering.window(true);
  t.same([...paused], [], "the window's end: read again, for the next window's share");
  steering.dropped('10.0.0.66', 4000);
  steering.release('10.0.0.66');
  steering.window(true);
  t.same(afterClose, [], 'a flow let go while not read is closed, never resumed');
});

t.test("a TCP connection held over its share is read again at the window's end, and held again if it goes over as it resumes", async (t) => {
  const { steering } = recorded();
  let reading = true;
  let overOnResume = false;
  // As a TcpConnection: resume() takes its buffered frames at once, and the first over the share holds it again.
  const connection = {
    pause: () => (reading = false),
    resume: () => {
      reading = true;
      if (overOnResume) steering.hold(connection);
    },
  };
  steering.hold(connection);
  t.notOk(reading, 'held');
  steering.window(false);
  t.ok(reading, 'read again at the window\'s end');
  steering.hold(connection);
  overOnResume = true;
  steering.window(false);
  t.notOk(reading, 'over again as it resumed: held for the new window');
  overOnResume = false;
  steering.window(false);
  t.ok(reading, 'and read again at its end');
});
