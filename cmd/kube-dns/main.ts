#!/usr/bin/env -S node --max-semi-space-size=2 --optimize-for-size
// kube-dns: its own flags (cmd/kube-dns/kube-dns.ts), or CoreDNS's (`-conf Corefile`, the coredns
// Deployment's args: cmd/kube-dns/coredns.ts). Each loads only what its mode runs. Nothing else lives here.

/** CoreDNS's flags, as distinct from kube-dns's own (`-version` alone is kube-dns's). */
const COREDNS_ONLY_FLAGS = ['conf', 'dns.port', 'pidfile', 'quiet', 'plugins'];

const argv = process.argv.slice(2);
const flagName = (a: string) => a.replace(/^--?/, '').split('=')[0];
if (argv.some((a) => a.startsWith('-') && COREDNS_ONLY_FLAGS.includes(flagName(a)))) await (await import('./coredns.ts')).runCorefile(argv);
else await import('./kube-dns.ts');
