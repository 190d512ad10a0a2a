// The files a single-node cluster's node runs on: containerd's config (its own root, state and socket
// under the cluster's directory, cgroupfs, the pause stand-in, runc through the oom-score clamp), the
// CNI bridge network (no masquerade: pods never reach past this machine), and the kubelet's and
// kube-proxy's configuration objects. Written as JSON where the program reads YAML (JSON is YAML).

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../helpers/process.ts';

/** The node's addresses and ranges. 10.200.0.1 lives on a bridge without ports (no dummy driver here). */
export const NET = {
  nodeIp: '10.200.0.1',
  /** A second resolver on the node's bridge, for stub domains: it serves corp.example. */
  stubIp: '10.200.0.2',
  nodeBridge: 'kdtnode0',
  podBridge: 'kdtcni0',
  podCidr: '10.244.0.0/24',
  podGateway: '10.244.0.1',
  clusterCidr: '10.244.0.0/16',
  serviceCidr: '10.96.0.0/12',
  kubernetesServiceIp: '10.96.0.1',
  dnsServiceIp: '10.96.0.10',
  domain: 'cluster.local',
  nodeName: 'kdt-node',
} as const;

/** The image containerd runs as every pod's sandbox: catatonit standing in for pause (test/cluster/images). */
export const PAUSE_IMAGE = 'registry.k8s.io/pause:3.10';

export interface NodeDirs {
  root: string;
  containerdSocket: string;
  cniConfDir: string;
  kubeletRoot: string;
  /** The node's resolv.conf: the kubelet's resolvConf, the upstream of `dnsPolicy: Default` pods. */
  resolvConf: string;
}

export function nodeDirs(root: string): NodeDirs {
  return {
    root,
    containerdSocket: join(root, 'containerd/containerd.sock'),
    cniConfDir: join(root, 'cni/net.d'),
    kubeletRoot: join(root, 'kubelet'),
    resolvConf: join(root, 'resolv.conf'),
  };
}

export function writeContainerdConfig(d: NodeDirs): string {
  const path = join(d.root, 'containerd/config.toml');
  mkdirSync(join(d.root, 'containerd'), { recursive: true });
  const wrapper = join(repoRoot, 'test/cluster/harness/runc-oom-clamp.sh');
  writeFileSync(path, `version = 2
root = "${join(d.root, 'containerd/root')}"
state = "${join(d.root, 'containerd/state')}"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = "${d.containerdSocket}"

[ttrpc]
  address = "${join(d.root, 'containerd/ttrpc.sock')}"

[plugins."io.containerd.internal.v1.opt"]
  path = "${join(d.root, 'containerd/opt')}"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${PAUSE_IMAGE}"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "${wrapper}"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${d.cniConfDir}"
`);
  return path;
}

export function writeCniConfig(d: NodeDirs): void {
  mkdirSync(d.cniConfDir, { recursive: true });
  const conflist = {
    cniVersion: '1.0.0',
    name: 'kdt-pods',
    plugins: [
      {
        type: 'bridge',
        bridge: NET.podBridge,
        isGateway: true,
        // Pods reach this machine's addresses and each other, never beyond (and a FORWARD rule drops
        // what would leave through the uplink).
        ipMasq: false,
        hairpinMode: true,
        ipam: { type: 'host-local', ranges: [[{ subnet: NET.podCidr, gateway: NET.podGateway }]], routes: [{ dst: '0.0.0.0/0' }], dataDir: join(d.root, 'cni/ipam') },
      },
    ],
  };
  writeFileSync(join(d.cniConfDir, '10-kdt-pods.conflist'), JSON.stringify(conflist, null, 2));
}

export interface KubeletPorts {
  port: number;
  healthzPort: number;
}

export function writeKubeletConfig(d: NodeDirs, ports: KubeletPorts): string {
  const path = join(d.root, 'kubelet-config.yaml');
  writeFileSync(path, JSON.stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    // cgroup v1 (hybrid) and PID 1 is not systemd on these machines.
    failCgroupV1: false,
    cgroupDriver: 'cgroupfs',
    cgroupRoot: '/kube-dns-ts', // made by the harness in every hierarchy, removed after
    address: NET.nodeIp,
    port: ports.port,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort: ports.healthzPort,
    // The API server is the only client of the kubelet's API (exec, logs), on this machine alone.
    authentication: { anonymous: { enabled: true }, webhook: { enabled: false } },
    authorization: { mode: 'AlwaysAllow' },
    clusterDNS: [NET.dnsServiceIp],
    clusterDomain: NET.domain,
    resolvConf: d.resolvConf,
    failSwapOn: false,
    // A shared test machine's disk is not the pods' to protect: no eviction for it.
    evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '1%', 'imagefs.available': '1%', 'nodefs.inodesFree': '1%' },
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    serializeImagePulls: false,
    containerRuntimeEndpoint: `unix://${d.containerdSocket}`,
    volumePluginDir: join(d.kubeletRoot, 'volume-plugins'),
    // Quick status for quick tests.
    nodeStatusUpdateFrequency: '4s',
    syncFrequency: '10s',
  }, null, 2));
  return path;
}

export type ProxyMode = 'iptables' | 'nftables';

export interface ProxyPorts {
  healthzPort: number;
  metricsPort: number;
}

export function writeKubeProxyConfig(d: NodeDirs, mode: ProxyMode, kubeconfig: string, ports: ProxyPorts): string {
  const path = join(d.root, `kube-proxy-${mode}.yaml`);
  writeFileSync(path, JSON.stringify({
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    mode,
    clientConnection: { kubeconfig },
    hostnameOverride: NET.nodeName,
    clusterCIDR: NET.clusterCidr,
    bindAddress: NET.nodeIp,
    healthzBindAddress: `127.0.0.1:${ports.healthzPort}`,
    metricsBindAddress: `127.0.0.1:${ports.metricsPort}`,
    // NodePorts only on the node's own address, never on this machine's other interfaces.
    nodePortAddresses: [`${NET.nodeIp}/32`],
    // Leave the machine's conntrack table sizes and timeouts as they are.
    conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
  }, null, 2));
  return path;
}
