import { join } from 'node:path';
import { NODE_NETWORK } from './node-network.ts';

/** The configuration files of the e2e node's containerd, CNI bridge, kubelet and kube-proxy. */

export const NODE_NAME = 'sy-e2e-node';
/** containerd's sandbox image, built from test/cluster/pause (no registry needed). */
export const PAUSE_IMAGE = 'localhost/switchyard-e2e-pause:1';

export function containerdConfig(dir: string): string {
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return `version = 2
root = "${dir}/containerd/root"
state = "${dir}/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.internal.v1.tracing", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "${dir}/containerd.sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "${dir}/containerd/opt"
[${cri}]
  sandbox_image = "${PAUSE_IMAGE}"
  # This sandbox lacks CAP_SYS_RESOURCE: a negative oom_score_adj (the sandbox's -998) cannot be
  # set, so none goes below containerd's own.
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
[${cri}.containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"
[${cri}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
[${cri}.containerd.runtimes.runc.options]
  SystemdCgroup = false
  Root = "${dir}/runc"
[${cri}.cni]
  bin_dir = "/usr/lib/cni"
  conf_dir = "${dir}/cni"
`;
}

export function cniConfig(dir: string): string {
  const { bridge, hostIp, podCidr } = NODE_NETWORK;
  return JSON.stringify({
    cniVersion: '1.0.0',
    name: 'switchyard-e2e',
    plugins: [
      {
        type: 'bridge',
        bridge,
        isGateway: true,
        ipMasq: false,
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          ranges: [[{ subnet: podCidr, gateway: hostIp }]],
          routes: [{ dst: '0.0.0.0/0' }],
          dataDir: join(dir, 'cni-ipam'),
        },
      },
    ],
  });
}

export function kubeletConfig(dir: string, caFile: string, port: number, healthzPort: number): string {
  return JSON.stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    address: NODE_NETWORK.hostIp,
    port,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort,
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: false },
      x509: { clientCAFile: caFile },
    },
    authorization: { mode: 'AlwaysAllow' },
    containerRuntimeEndpoint: `unix://${dir}/containerd.sock`,
    // This machine has cgroup v1 (hybrid) and no systemd.
    cgroupDriver: 'cgroupfs',
    failCgroupV1: false,
    failSwapOn: false,
    // No cluster DNS: the pods reach Redis, the API server and the test's servers by address.
    resolvConf: '/etc/resolv.conf',
    // The images are imported, never pulled: keep them whatever the disk holds.
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '1%', 'imagefs.available': '1%' },
    serializeImagePulls: false,
    nodeStatusUpdateFrequency: '2s',
    syncFrequency: '5s',
  });
}

export function kubeProxyConfig(kubeconfig: string, metricsPort: number, healthzPort: number): string {
  return JSON.stringify({
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    clientConnection: { kubeconfig },
    mode: 'iptables',
    hostnameOverride: NODE_NAME,
    clusterCIDR: NODE_NETWORK.podCidr,
    metricsBindAddress: `127.0.0.1:${metricsPort}`,
    healthzBindAddress: `127.0.0.1:${healthzPort}`,
    nodePortAddresses: [`${NODE_NETWORK.hostIp}/32`],
    // Every connection to a Service is masqueraded, so replies always come back through the host.
    iptables: { masqueradeAll: true, syncPeriod: '30s', minSyncPeriod: '0s', localhostNodePorts: false },
    // Leave the machine's conntrack settings alone.
    conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
  });
}

/** Starts containerd, imports the images, then kubelet, kube-scheduler and kube-proxy; waits for Ready. */
