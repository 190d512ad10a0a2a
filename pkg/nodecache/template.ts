// -basecorefile → -corefile, as the original node-cache renders it: the pillars it owns filled in, the
// kube-dns ConfigMap's stubDomains appended as server blocks of their own, its upstreamNameservers in
// place of the resolv.conf's servers. The other pillars (__PILLAR__DNS__DOMAIN__, __PILLAR__LOCAL__DNS__,
// __PILLAR__DNS__SERVER__) are the operator's to replace before applying the manifest; one left over
// is an error naming its line, as any line we cannot serve.

const { isIP } = process.getBuiltinModule('node:net');
import type { KubeDnsConfig } from '../config/config.ts';
import { parseStubServer } from '../config/config.ts';
import { CorefileError } from '../corefile/errors.ts';

/** Replaced by the kube-dns Service's ClusterIP (`-upstreamsvc`, from `<NAME>_SERVICE_HOST`). */
export const CLUSTER_DNS_PILLAR = '__PILLAR__CLUSTER__DNS__';
/** Replaced by the ConfigMap's upstreamNameservers, else the nameservers of /etc/resolv.conf. */
export const UPSTREAM_SERVERS_PILLAR = '__PILLAR__UPSTREAM__SERVERS__';
/** A stub domain's block keeps answers this long at most, as the original's. */
export const STUB_CACHE_TTL = 30;

export interface TemplateValues {
  /** The kube-dns Service's ClusterIP. */
  clusterDns: string;
  /** The nameservers of the node's resolv.conf (`dnsPolicy: Default`). */
  resolvServers: readonly string[];
  /** -localip: what every stub domain block binds. */
  localIps: readonly string[];
  /** -dns.port. */
  port: number;
  config: KubeDnsConfig;
}

export interface Rendered {
  text: string;
  /** ConfigMap entries left out (a stub server that is a name: CoreDNS's forward takes addresses only). */
  skipped: string[];
}

/** The environment variable the kubelet sets for a Service's ClusterIP: kube-dns-upstream → KUBE_DNS_UPSTREAM_SERVICE_HOST. */
export function serviceHostEnv(service: string): string {
  return `${service.toUpperCase().replaceAll('-', '_')}_SERVICE_HOST`;
}

export function renderCorefile(base: string, v: TemplateValues): Rendered {
  const skipped: string[] = [];
  const upstreams = v.config.upstreamNameservers.length > 0 ? v.config.upstreamNameservers : v.resolvServers;
  let text = base.replaceAll(CLUSTER_DNS_PILLAR, v.clusterDns).replaceAll(UPSTREAM_SERVERS_PILLAR, upstreams.map(forwardTarget).join(' '));
  const left = /__PILLAR__\w+__/.exec(text);
  if (left !== null) {
    const line = text.slice(0, left.index).split('\n').length;
    throw new CorefileError('COREFILE_INVALID', line, `${left[0]} is not replaced (the manifest's placeholders are yours to fill in before applying it)`);
  }
  for (const [domain, servers] of v.config.stubDomains) {
    const addresses = servers.filter((s) => {
      const host = parseStubServer(s).host;
      if (isIP(host) !== 0) return true;
      skipped.push(`stubDomains ${domain}: ${s} is not an IP address`);
      return false;
    });
    if (addresses.length === 0) continue;
    if (!text.endsWith('\n')) text += '\n';
    text += `${domain}:${v.port} {\n    errors\n    cache ${STUB_CACHE_TTL}\n    bind ${v.localIps.join(' ')}\n    forward . ${addresses.map(forwardTarget).join(' ')}\n}\n`;
  }
  return { text, skipped };
}

/** ip, ip:port or [v6]:port as CoreDNS's forward writes it. */
function forwardTarget(server: string): string {
  const { host, port } = parseStubServer(server);
  const h = host.includes(':') ? `[${host}]` : host;
  return port === 53 && !host.includes(':') ? h : `${h}:${port}`;
}
