// The tests' free-port helper: a port it gives is one no client socket can be handed by the kernel as
// its source port, so a server stopped and started again on it (a restarted dnscache) finds it free;
// and none of the fixed ports that the real `npm start` test binds while other tests run beside it.

import t from 'tap';
import { localPodFlags } from '../../cmd/local-pod/flags.ts';
import { ephemeralRange, freePort, stableRange } from '../helpers/ports.ts';

t.test('freePort gives a port outside the ephemeral range, free for UDP and TCP', async (t) => {
  const [low, high] = ephemeralRange();
  for (let i = 0; i < 20; i++) {
    const port = await freePort();
    t.ok(port < low || port > high, `${port} outside ${low}-${high}`);
  }
});

t.test("the ports freePort draws from leave npm start's fixed ports alone", async (t) => {
  const range = stableRange();
  t.ok(range, 'a range outside the ephemeral one on this machine');
  const fixed = Object.entries(localPodFlags).filter(([name]) => name.endsWith('-port')).map(([, f]) => (f as { default: number }).default);
  t.same(fixed.filter((p) => p >= range![0] && p <= range![1]), [], `${fixed.join(', ')} outside ${range!.join('-')}`);
});
