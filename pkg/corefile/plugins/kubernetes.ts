// `kubernetes [ZONES...] { pods insecure|verified|disabled; fallthrough [ZONES...]; ttl N; namespaces NS...; kubeconfig FILE [CONTEXT];
// endpoint URL; endpoint_pod_names; noendpoints }`: the cluster zone and the reverse zones (`in-addr.arpa`,
// `ip6.arpa`) a program answers from the API's Services, EndpointSlices and Pods. CoreDNS's defaults:
// the block's zones, pods disabled, TTL 5 s. Other options are refused (not served yet).

import { normalizeDomain } from '../../config/config.ts';
import { invalid, unserved, wholeNumber, written } from '../args.ts';
import { cidrReverseZones } from '../cidr.ts';
import type { Directive } from '../read.ts';

export type PodsMode = 'insecure' | 'verified' | 'disabled';

export interface KubernetesOptions {
  /** The zones it answers: lowercase, no trailing dot. */
  zones: string[];
  pods: PodsMode;
  ttl: number;
  /** `fallthrough`: the zones whose names it does not hold go on to the next plugin; `['']`: every zone. */
  fallthrough: string[];
  kubeconfig: string | null;
  /** `namespaces NS...`: the only namespaces exposed; null: every one. */
  namespaces: string[] | null;
  /** `kubeconfig FILE CONTEXT`: the context; null: the file's current one. */
  kubeconfigContext: string | null;
  endpoint: string | null;
  /** `endpoint_pod_names`: an endpoint without a hostname named by its pod, not by its address. */
  endpointPodNames: boolean;
  /** `noendpoints`: endpoints not read (headless services and endpoint names answer NXDOMAIN). */
  noEndpoints: boolean;
}

/** CoreDNS kubernetes's TTL unless `ttl` says otherwise. */
const DEFAULT_TTL = 5;

/** `blockZone`: the server block's zone, the plugin's zone when it names none. */
export function kubernetesOptions(d: Directive, blockZone: string): KubernetesOptions {
  const k: KubernetesOptions = { zones: d.args.length > 0 ? d.args.flatMap(zonesOf) : [blockZone], pods: 'disabled', ttl: DEFAULT_TTL, fallthrough: [], namespaces: null, kubeconfig: null, kubeconfigContext: null, endpoint: null, endpointPodNames: false, noEndpoints: false };
  for (const o of d.block ?? []) {
    if (o.name === 'pods' && o.args.length === 1 && (o.args[0] === 'insecure' || o.args[0] === 'verified' || o.args[0] === 'disabled')) k.pods = o.args[0];
    else if (o.name === 'ttl' && o.args.length === 1) k.ttl = ttlOf(o);
    else if (o.name === 'fallthrough' && o.block === null) k.fallthrough = o.args.length === 0 ? [''] : o.args.flatMap(zonesOf);
    else if (o.name === 'namespaces' && o.args.length > 0 && o.block === null) k.namespaces = o.args.map((n) => n.toLowerCase());
    else if (o.name === 'kubeconfig' && (o.args.length === 1 || o.args.length === 2)) [k.kubeconfig, k.kubeconfigContext] = [o.args[0], o.args[1] ?? null];
    else if (o.name === 'endpoint' && o.args.length === 1) k.endpoint = endpointOf(o);
    else if (o.name === 'endpoint_pod_names' && o.args.length === 0 && o.block === null) k.endpointPodNames = true;
    else if (o.name === 'noendpoints' && o.args.length === 0 && o.block === null) k.noEndpoints = true;
    else throw unserved(o, `kubernetes option \`${written(o)}\``);
  }
  return k;
}

/** A zone as written, or the reverse zones a CIDR stands for (as CoreDNS expands it). */
const zonesOf = (z: string) => cidrReverseZones(z) ?? [z === '.' ? '' : normalizeDomain(z)];

function ttlOf(o: Directive): number {
  const ttl = wholeNumber(o, o.args[0], 'the TTL', 0);
  if (ttl > 3600) throw invalid(o, 'the TTL must be 0-3600');
  return ttl;
}

function endpointOf(o: Directive): string {
  if (!/^https?:\/\/\S+$/.test(o.args[0])) throw invalid(o, `${JSON.stringify(o.args[0])} is not an http(s) URL`);
  return o.args[0];
}
