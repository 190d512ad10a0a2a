// The Kubernetes API source both of kube-dns's command lines make (its own flags, a Corefile's kubernetes).

import { startingWatches } from '../../pkg/cluster/kinds.ts';
import type { EndpointsApi } from '../../pkg/cluster/kinds.ts';
import type { Logger } from '../../pkg/log/log.ts';
import { KubernetesSource } from '../../pkg/source/kubernetes.ts';

export interface ApiSourceOptions {
  /** '' : none (in-cluster, or masterUrl alone). */
  kubeconfig: string;
  /** The kubeconfig's context; '' its current one. */
  kubeconfigContext?: string;
  masterUrl: string;
  endpointsApi: EndpointsApi;
  configMap: string;
  configMapNamespace: string;
  silentWatchMs: number;
}

export function apiSource(o: ApiSourceOptions, log: Logger): KubernetesSource {
  return new KubernetesSource({
    connection: { kubeconfig: o.kubeconfig || undefined, context: o.kubeconfigContext || undefined, masterUrl: o.masterUrl || undefined },
    watches: startingWatches({ endpointsApi: o.endpointsApi, configMap: o.configMap, configMapNamespace: o.configMapNamespace }),
    silentWatchMs: o.silentWatchMs,
    log: log.child('kubernetes-source'),
  });
}
