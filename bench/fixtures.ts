// Generated clusters for the benchmarks: the same names as a kube-dns cluster file, a dnsmasq hosts
// file and a dnsperf query file.

export interface BenchCluster {
  yaml: string;
  hosts: string;
  queries: string;
  services: number;
  endpoints: number;
}

const ip = (base: number, i: number): string => `10.${base + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;

function shuffle<T>(a: T[], seed = 42): T[] {
  let s = seed;
  for (let i = a.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    const j = s % (i + 1);
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

/**
 * `services` ClusterIP services spread over 100 namespaces; when `endpointsPerService` > 0 they are
 * headless instead, each with one EndpointSlice of that many ready endpoints (hostnames on half).
 */
export function makeCluster(services: number, endpointsPerService = 0, maxQueries = 20_000): BenchCluster {
  const docs: string[] = [];
  const hosts: string[] = [];
  const names: string[] = [];
  for (let i = 0; i < services; i++) {
    const ns = `ns-${i % 100}`;
    const name = `svc-${i}`;
    const fqdn = `${name}.${ns}.svc.cluster.local`;
    names.push(fqdn);
    if (endpointsPerService === 0) {
      docs.push(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"${name}","namespace":"${ns}"},"spec":{"clusterIP":"${ip(96, i)}","ports":[{"name":"http","port":80,"protocol":"TCP"}]}}`);
      hosts.push(`${ip(96, i)} ${fqdn}`);
      continue;
    }
    docs.push(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"${name}","namespace":"${ns}"},"spec":{"clusterIP":"None","ports":[{"name":"http","port":80,"protocol":"TCP"}]}}`);
    const eps: string[] = [];
    for (let e = 0; e < endpointsPerService; e++) {
      const addr = ip(128, i * endpointsPerService + e);
      eps.push(`{"addresses":["${addr}"],${e % 2 === 0 ? `"hostname":"${name}-${e}",` : ''}"conditions":{"ready":true}}`);
      hosts.push(`${addr} ${fqdn}`);
    }
    docs.push(`{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"name":"${name}-abc","namespace":"${ns}","labels":{"kubernetes.io/service-name":"${name}"}},"addressType":"IPv4","endpoints":[${eps.join(',')}],"ports":[{"name":"http","port":80,"protocol":"TCP"}]}`);
  }
  const queries = shuffle(names).slice(0, maxQueries).map((n) => `${n} A`);
  return {
    yaml: `{"apiVersion":"v1","kind":"List","items":[\n${docs.join(',\n')}\n]}\n`,
    hosts: hosts.join('\n') + '\n',
    queries: queries.join('\n') + '\n',
    services,
    endpoints: services * endpointsPerService,
  };
}
