// The tests' free-port helper: a port it gives is one no client socket can be handed by the kernel as
// its source port, so a server stopped and started again on it (a restarted dnscache) finds it free.

import t from 'tap';
import { ephemeralRange, freePort } from '../helpers/ports.ts';

t.test('freePort gives a port outside the ephemeral range, free for UDP and TCP', async (t) => {
  const [low, high] = ephemeralRange();
  for (let i = 0; i < 20; i++) {
    const port = await freePort();
    t.ok(port < low || port > high, `${port} outside ${low}-${high}`);
  }
});
