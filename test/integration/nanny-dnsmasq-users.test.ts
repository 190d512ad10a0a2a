// dnsmasq-nanny with the real dnsmasq run the ways users run it beside the one nanny-dnsmasq.test.ts
// covers (root, dnsmasq's own drop to nobody, --log-facility=-): without --log-facility (dnsmasq then
// logs to syslog, and the nanny never sees its ready line), and with --user=root as before. Either
// way the ConfigMap's servers must reach it by SIGHUP.

import t from 'tap';
import { reloadScenario } from '../helpers/nanny-scenarios.ts';

if (process.getuid?.() !== 0) {
  t.test('dnsmasq privilege drop', { skip: 'dnsmasq drops privileges only when started as root: run as root (CI does)' }, async () => {});
} else {
  reloadScenario(t, 'dnsmasq', { logToStderr: false }, 'dropping to nobody, no --log-facility: SIGHUPs still reach it');
  reloadScenario(t, 'dnsmasq', { dnsmasqUser: 'root' }, '--user=root: as before');
}
