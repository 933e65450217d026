package testbed

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// Component names, as used in logs and by StopComponent/StartComponent.
const (
	Etcd              = "etcd"
	APIServer         = "kube-apiserver"
	ControllerManager = "kube-controller-manager"
	Scheduler         = "kube-scheduler"
	Kwok              = "kwok"
)

// ports of one cluster, all on 127.0.0.1.
type clusterPorts struct {
	etcdClient, etcdPeer, apiServer, kwok int
	// controllerManager serves its /debug/pprof; 0 unless profiling.
	controllerManager int
}

func (p clusterPorts) list() []int {
	ports := []int{p.etcdClient, p.etcdPeer, p.apiServer, p.kwok}
	if p.controllerManager != 0 {
		ports = append(ports, p.controllerManager)
	}
	return ports
}

func (c *Cluster) etcdArgs() []string {
	client := fmt.Sprintf("http://127.0.0.1:%d", c.ports.etcdClient)
	peer := fmt.Sprintf("http://127.0.0.1:%d", c.ports.etcdPeer)
	return []string{
		"--name=" + c.Name,
		"--data-dir=" + filepath.Join(c.Dir, "etcd"),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=" + c.Name + "=" + peer,
		// The testbed is disposable: durability is not worth the fsync latency.
		"--unsafe-no-fsync",
		"--log-level=warn",
	}
}

func (c *Cluster) apiServerArgs() []string {
	args := []string{
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", c.ports.etcdClient),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(c.ports.apiServer),
		"--tls-cert-file=" + c.pki.servingCert(),
		"--tls-private-key-file=" + c.pki.servingKey(),
		"--client-ca-file=" + c.pki.caFile(),
		"--kubelet-client-certificate=" + c.pki.kubeletCert(),
		"--kubelet-client-key=" + c.pki.kubeletKey(),
		"--kubelet-certificate-authority=" + c.pki.caFile(),
		"--admission-control-config-file=" + c.pki.admissionConfig(),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + c.pki.saPubFile(),
		"--service-account-signing-key-file=" + c.pki.saKeyFile(),
		"--service-cluster-ip-range=" + c.Spec.ServiceCIDR,
		"--authorization-mode=Node,RBAC",
		"--allow-privileged=true",
		"--profiling=" + strconv.FormatBool(c.Spec.APIServerProfiling),
		// Nodes' names resolve nowhere: the API server reaches kubelets
		// (real ones, and kwok's for simulated nodes, which also publish
		// a Hostname address: forgeNode) at their InternalIP.
		"--kubelet-preferred-address-types=InternalIP,Hostname",
		"--v=0",
	}
	args = append(args, c.pki.frontProxyArgs()...)
	if c.slot == nil {
		// Loopback addresses are invalid in EndpointSlices, so the default
		// reconciler would fail forever publishing 127.0.0.1 for `kubernetes`.
		return append(args, "--endpoint-reconciler-type=none")
	}
	// With real nodes, `kubernetes` points at the forwarder on the underlay,
	// and the API server dials kubelets through the egress proxy.
	return append(args,
		"--advertise-address="+c.slot.addr().String(),
		"--egress-selector-config-file="+c.egressConfig(),
	)
}

func (c *Cluster) controllerManagerArgs() []string {
	args := []string{
		"--kubeconfig=" + c.Kubeconfig,
		// 0 (none) unless profiling.
		"--secure-port=" + strconv.Itoa(c.ports.controllerManager),
		"--leader-elect=false",
		"--use-service-account-credentials=true",
		"--service-account-private-key-file=" + c.pki.saKeyFile(),
		"--root-ca-file=" + c.pki.caFile(),
		"--cluster-signing-cert-file=" + c.pki.caFile(),
		"--cluster-signing-key-file=" + c.pki.caKeyFile(),
		"--allocate-node-cidrs=true",
		"--cluster-cidr=" + c.Spec.PodCIDR,
		"--node-cidr-mask-size=" + strconv.Itoa(c.Spec.nodeCIDRMaskSize()),
		"--service-cluster-ip-range=" + c.Spec.ServiceCIDR,
		"--profiling=" + strconv.FormatBool(c.ports.controllerManager != 0),
		"--v=0",
	}
	if c.ports.controllerManager != 0 {
		// The secure port on loopback, with a self-signed certificate;
		// /debug/pprof is served to anyone who reaches it, as no
		// authentication kubeconfig is given.
		args = append(args, "--bind-address=127.0.0.1", "--authorization-always-allow-paths=/healthz,/debug/pprof/*")
	}
	if c.Spec.ControllerManagerQPS > 0 {
		args = append(args, fmt.Sprintf("--kube-api-qps=%g", c.Spec.ControllerManagerQPS))
	}
	if c.Spec.ControllerManagerBurst > 0 {
		args = append(args, "--kube-api-burst="+strconv.Itoa(c.Spec.ControllerManagerBurst))
	}
	return args
}

// schedulerArgs writes the scheduler's configuration file: client rate
// limits are only settable there without deprecated flags.
func (c *Cluster) schedulerArgs() ([]string, error) {
	qps, burst := float32(50), 100
	if c.Spec.SchedulerQPS > 0 {
		qps = c.Spec.SchedulerQPS
	}
	if c.Spec.SchedulerBurst > 0 {
		burst = c.Spec.SchedulerBurst
	}
	cfg := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  qps: %g
  burst: %d
leaderElection:
  leaderElect: false
`, c.Kubeconfig, qps, burst)
	path := filepath.Join(c.Dir, "scheduler.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	return []string{"--config=" + path, "--secure-port=0", "--v=0"}, nil
}

func (c *Cluster) kwokArgs(stages string) []string {
	return []string{
		"--kubeconfig=" + c.Kubeconfig,
		"--config=" + stages,
		"--config=" + c.kwokDebugConfig(),
		"--config=" + c.kwokGatewayConfig(),
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=fake",
		"--cidr=" + c.Spec.PodCIDR,
		"--node-ip=" + kwokNodeIP,
		fmt.Sprintf("--node-port=%d", c.ports.kwok),
		fmt.Sprintf("--server-address=%s:%d", kwokNodeIP, c.ports.kwok),
		"--tls-cert-file=" + c.pki.kwokServerCrt(),
		"--tls-private-key-file=" + c.pki.kwokServerKey(),
		// Without node Leases, kube-controller-manager finds the nodes silent
		// ~50 s after start, marks them NotReady and their pods not Ready, and
		// kwok never brings the pods back: heartbeat like a kubelet does.
		"--node-lease-duration-seconds=40",
	}
}
