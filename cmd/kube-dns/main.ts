#!/usr/bin/env -S node --max-semi-space-size=2 --optimize-for-size
// kube-dns: its own flags (cmd/kube-dns/kube-dns.ts), or CoreDNS's (`-conf Corefile`, the coredns
// Deployment's args: cmd/kube-dns/coredns.ts). Nothing else lives here.

import { COREDNS_ONLY_FLAGS, runCorefile } from './coredns.ts';

const argv = process.argv.slice(2);
const flagName = (a: string) => a.replace(/^--?/, '').split('=')[0];
if (argv.some((a) => a.startsWith('-') && COREDNS_ONLY_FLAGS.includes(flagName(a)))) await runCorefile(argv);
else await import('./kube-dns.ts');
