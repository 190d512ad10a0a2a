// What `npm start` prints once the pod answers: what listens where, and commands to try.

import { CLUSTER_DOMAIN, LOOPBACK } from './plan.ts';
import type { LocalPodOptions } from './plan.ts';

export function bannerText(o: LocalPodOptions): string {
  const at = (port: number) => `${LOOPBACK}:${port}`.padEnd(16);
  const dig = `dig @${LOOPBACK} -p ${o.dnsPort}`;
  const http = (port: number, path: string) => `curl http://${LOOPBACK}:${port}${path}`;
  return [
    '',
    `The kube-dns pod is running on loopback: cluster ${CLUSTER_DOMAIN} from ${o.clusterFile}, config from ${o.configDir}/`,
    '',
    `  ${at(o.dnsPort)} DNS   dnscache (supervised by dnsmasq-nanny): the pod's DNS for clients`,
    `  ${at(o.kubednsPort)} DNS   kube-dns: the cluster zone, asked by dnscache for ${CLUSTER_DOMAIN} and reverse names`,
    `  ${at(o.healthzPort)} HTTP  kube-dns: /readiness /healthz /cache /metrics`,
    `  ${at(o.sidecarPort)} HTTP  sidecar: /healthcheck/kubedns /healthcheck/dnsmasq /metrics`,
    `  ${at(o.nannyMetricsPort)} HTTP  dnsmasq-nanny: /metrics /healthz`,
    '',
    'Try:',
    `  ${dig} kubernetes.default.svc.${CLUSTER_DOMAIN}`,
    `  ${dig} _postgres._tcp.db.default.svc.${CLUSTER_DOMAIN} SRV`,
    `  ${dig} web.default.svc.${CLUSTER_DOMAIN} AAAA`,
    `  ${dig} -x 10.96.0.10`,
    `  ${dig} service1.test.global                  (an Istio ServiceEntry host, answered by kube-dns)`,
    `  ${dig} hits.bind CH TXT                  (dnscache's statistics, as the sidecar reads them)`,
    `  ${http(o.sidecarPort, '/healthcheck/kubedns')}`,
    `  ${http(o.sidecarPort, '/metrics')}                 (kubedns_dnsmasq_hits, kubedns_probe_*)`,
    `  ${http(o.healthzPort, '/readiness')}`,
    `  ${http(o.nannyMetricsPort, '/metrics')}`,
    '',
    `Edit ${o.clusterFile}: kube-dns (port ${o.kubednsPort}) serves the change within a second; port ${o.dnsPort}`,
    `once dnscache's cached copy expires (the records' TTL, 30 s). Add stubDomains or upstreamNameservers`,
    `to ${o.configDir}/: dnscache is reconfigured within a second (its cache cleared).`,
    'Ctrl-C stops all three.',
    '',
  ].join('\n');
}
