// CoreDNS 1.15's plugins in the order its plugin.cfg gives them: the order a server block's plugins
// run in, whatever order they are written in. A program's table (plan.ts) serves some of them, in
// this order; a name not here is no CoreDNS plugin at all.

export const COREDNS_ORDER: readonly string[] = [
  'root', 'metadata', 'geoip', 'cancel', 'proxyproto', 'quic', 'grpc_server', 'https', 'https3', 'timeouts',
  'multisocket', 'reload', 'nsid', 'bufsize', 'bind', 'debug', 'trace', 'ready', 'health', 'pprof', 'shed',
  'prometheus', 'errors', 'log', 'dnstap', 'local', 'dns64', 'siit', 'any', 'chaos', 'loadbalance', 'tsig',
  'rewrite', 'autopath', 'acl', 'cache', 'header', 'dnssec', 'tls', 'minimal', 'template', 'transfer',
  'dynupdate', 'hosts', 'route53', 'azure', 'clouddns', 'k8s_external', 'kubernetes', 'file', 'auto',
  'secondary', 'etcd', 'loop', 'forward', 'grpc', 'erratic', 'whoami', 'on', 'sign', 'view', 'nomad',
];
