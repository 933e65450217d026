package gateway

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/gateway"
	"github.com/liqo-go/liqo/pkg/kit"
)

// Labels on the gateway pods: the Service selects them, and the pod watch
// maps them back to their gateway.
const (
	ComponentLabel = "networking.liqo.io/component"
	ComponentValue = "gateway"
	// NameLabel is the GatewayServer's or GatewayClient's name; ModeLabel
	// tells which of the two.
	NameLabel = "networking.liqo.io/gateway-name"
	ModeLabel = "networking.liqo.io/gateway-mode"
)

// Mode is the side of the tunnel a gateway is on.
type Mode = gateway.Mode

// The two modes: the server listens, the client dials it.
const (
	Server = gateway.Server
	Client = gateway.Client
)

// Ports of the gateway container.
const (
	// TunnelPort is where the server's WireGuard listens inside its pod;
	// the Service maps spec.endpoint.port to it.
	TunnelPort = int32(netv1beta1.DefaultGatewayPort)
	// HealthPort serves /readyz: ready once the tunnel device is up.
	HealthPort = int32(8080)
	// MetricsPort serves the gateway's metrics (the tunnel's dropped
	// packets among them) over HTTPS, to callers allowed to get /metrics.
	MetricsPort = int32(8443)
	// KeysDir is where the key Secret is mounted.
	KeysDir = "/etc/liqo/wireguard"
)

// ClusterRoles the gateways are bound to: their rights in their own tenant
// namespace (through a RoleBinding) and, cluster-wide, reading Nodes (the
// overlay back to each node needs their addresses). Their rules are the
// markers of pkg/rbac/gateway and pkg/rbac/gatewaynodes.
const (
	GatewayClusterRole      = "liqo-gateway"
	GatewayNodesClusterRole = "liqo-gateway-nodes"
	// NodesBinding binds every gateway's ServiceAccount to
	// GatewayNodesClusterRole; it is rebuilt from the gateways that exist.
	NodesBinding = "liqo-gateway-nodes"
)

// GatewayUIDAnnotation holds, on a gateway pod, the UID of its gateway
// object.
const GatewayUIDAnnotation = "networking.liqo.io/gateway-uid"

// desc is what forging needs of a GatewayServer or a GatewayClient.
type desc struct {
	Mode            Mode
	Name, Namespace string
	UID             types.UID
	Kind            string
	RemoteClusterID string
	MTU             int32
	// SecretName is the key Secret: spec.secretRef, or one of our own.
	SecretName string
	// OwnSecret tells that SecretName is ours to create.
	OwnSecret bool
	// Server only: the Service.
	Endpoint netv1beta1.Endpoint
	// Client only: what to dial.
	Dial netv1beta1.EndpointStatus
}

func (d desc) labels() map[string]string {
	l := map[string]string{
		ComponentLabel: ComponentValue, NameLabel: d.Name, ModeLabel: string(d.Mode),
		consts.ManagedByLabel: consts.ManagedByValue,
	}
	if d.RemoteClusterID != "" {
		l[consts.RemoteClusterIDLabel] = d.RemoteClusterID
	}
	return l
}

// selector is the subset of labels that picks the gateway's pods.
func (d desc) selector() map[string]string {
	return map[string]string{ComponentLabel: ComponentValue, NameLabel: d.Name, ModeLabel: string(d.Mode)}
}

// activeSelector picks the one pod carrying the tunnel (the replica holding
// the gateway's Lease labels itself).
func (d desc) activeSelector() map[string]string {
	s := d.selector()
	s[netv1beta1.GatewayActiveLabel] = "true"
	return s
}

func (d desc) meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: name, Namespace: d.Namespace, Labels: d.labels(),
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: netv1beta1.GroupVersion.String(), Kind: d.Kind, Name: d.Name, UID: d.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}},
	}
}

// KeySecret is a new key Secret holding private and public.
func (d desc) KeySecret(private, public []byte) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: d.meta(d.SecretName), Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{consts.PrivateKeyKey: private, consts.PublicKeyKey: public}}
	s.Labels[netv1beta1.GatewayResourceLabel] = "true"
	return s
}

// ServiceAccount the gateway pod runs as.
func (d desc) ServiceAccount() *corev1.ServiceAccount {
	return &corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta: d.meta(consts.GatewayResourceName(d.Name))}
}

// RoleBinding gives the gateway GatewayClusterRole's rights in its namespace.
func (d desc) RoleBinding() *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
		ObjectMeta: d.meta(consts.GatewayResourceName(d.Name)),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: GatewayClusterRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: consts.GatewayResourceName(d.Name), Namespace: d.Namespace}},
	}
}

// Service is the server's UDP Service, of the type its endpoint asks for
// (NodePort when unset: it needs nothing the cluster may lack).
func (d desc) Service() *corev1.Service {
	typ := d.Endpoint.ServiceType
	if typ == "" {
		typ = corev1.ServiceTypeNodePort
	}
	port := d.Endpoint.Port
	if port == 0 {
		port = TunnelPort
	}
	sp := corev1.ServicePort{Name: "wireguard", Protocol: corev1.ProtocolUDP, Port: port, TargetPort: intstr.FromInt32(TunnelPort)}
	if typ != corev1.ServiceTypeClusterIP && d.Endpoint.NodePort != nil {
		sp.NodePort = *d.Endpoint.NodePort
	}
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: d.meta(consts.GatewayResourceName(d.Name)),
		Spec:       corev1.ServiceSpec{Type: typ, Selector: d.activeSelector(), Ports: []corev1.ServicePort{sp}},
	}
	if typ == corev1.ServiceTypeLoadBalancer && d.Endpoint.LoadBalancerIP != nil {
		svc.Spec.LoadBalancerIP = *d.Endpoint.LoadBalancerIP
	}
	return svc
}

// args are the gateway command's flags.
func (d desc) args() []string {
	mtu := d.MTU
	if mtu == 0 {
		mtu = netv1beta1.DefaultMTU
	}
	a := []string{
		"--mode=" + string(d.Mode),
		"--name=" + d.Name,
		"--namespace=" + d.Namespace,
		"--remote-cluster-id=" + d.RemoteClusterID,
		"--mtu=" + strconv.Itoa(int(mtu)),
		"--keys-dir=" + KeysDir,
		"--health-port=" + strconv.Itoa(int(HealthPort)),
		"--metrics-address=:" + strconv.Itoa(int(MetricsPort)),
	}
	if d.Mode == Server {
		a = append(a, "--listen-port="+strconv.Itoa(int(TunnelPort)))
	} else {
		addrs := make([]string, len(d.Dial.Addresses))
		for i, x := range d.Dial.Addresses {
			addrs[i] = string(x)
		}
		a = append(a, "--endpoint-addresses="+strings.Join(addrs, ","), fmt.Sprintf("--endpoint-port=%d", d.Dial.Port))
	}
	return a
}

// Deployment is the gateway's pods: one, or o.Replicas. Whatever their
// number, only the one holding the gateway's Lease opens the tunnel (two
// would hold the same key and fight over the peer's endpoint), so an
// update rolls: the new pod stands by until the old one, stopping,
// releases the Lease. The pod is not privileged (SecurityContext).
func (d desc) Deployment(o Options) *appsv1.Deployment {
	env := func(name, path string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
	}
	c := corev1.Container{
		Name: "gateway", Image: o.Image, ImagePullPolicy: o.PullPolicy, Args: d.args(),
		Env: []corev1.EnvVar{env("POD_NAME", "metadata.name"), env("POD_NAMESPACE", "metadata.namespace"),
			env("POD_IP", "status.podIP"), env("NODE_NAME", "spec.nodeName")},
		Ports: []corev1.ContainerPort{{Name: "health", ContainerPort: HealthPort, Protocol: corev1.ProtocolTCP},
			{Name: "https-metrics", ContainerPort: MetricsPort, Protocol: corev1.ProtocolTCP}},
		// Probed every second: the peering waits for the gateway's
		// readiness, and the first probe, at the container's start, often
		// comes before the health server listens. Four misses in a row
		// make it unready.
		ReadinessProbe: &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(HealthPort)}},
			PeriodSeconds: 1, FailureThreshold: 4,
		},
		SecurityContext: SecurityContext(),
		VolumeMounts:    []corev1.VolumeMount{{Name: "keys", MountPath: KeysDir, ReadOnly: true}},
	}
	if d.Mode == Server {
		c.Ports = append(c.Ports, corev1.ContainerPort{Name: "wireguard", ContainerPort: TunnelPort, Protocol: corev1.ProtocolUDP})
	}
	var replicas *int32
	if o.Replicas > 1 {
		replicas = ptr.To(o.Replicas)
	}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "Deployment"},
		ObjectMeta: d.meta(consts.GatewayResourceName(d.Name)),
		Spec: appsv1.DeploymentSpec{
			// Without o.Replicas, left to the Deployment's default (one)
			// and not applied: an administrator may scale a gateway to zero
			// to cut the tunnel for a while, and the controller does not
			// undo it.
			Replicas: replicas,
			Selector: &metav1.LabelSelector{MatchLabels: d.selector()},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
				MaxUnavailable: ptr.To(intstr.FromInt32(0)), MaxSurge: ptr.To(intstr.FromInt32(1))}},
			Template: corev1.PodTemplateSpec{
				// The gateway's UID in the template: a gateway deleted and
				// created again under the same name (network reset, then
				// connect) gets new keys, and its pod must be a new one too;
				// with an identical template the old pod, still holding the
				// old key, could be adopted and keep running.
				ObjectMeta: metav1.ObjectMeta{Labels: d.labels(), Annotations: map[string]string{GatewayUIDAnnotation: string(d.UID)}},
				Spec: corev1.PodSpec{
					// Never on a virtual node: it would be offloaded to a
					// peer, the tunnel to that peer running through itself.
					Affinity:                      kit.AvoidVirtualNodes(),
					NodeSelector:                  o.NodeSelector,
					ServiceAccountName:            consts.GatewayResourceName(d.Name),
					TerminationGracePeriodSeconds: ptr.To(int64(5)),
					Containers:                    []corev1.Container{c},
					Volumes: []corev1.Volume{{Name: "keys", VolumeSource: corev1.VolumeSource{
						Secret: &corev1.SecretVolumeSource{SecretName: d.SecretName}}}},
				},
			},
		},
	}
}

// Capabilities are all the gateway's container keeps: NET_ADMIN for the
// TUN device, links, addresses, routes, rules, nftables and the links'
// forwarding settings of its own network namespace (the pod's, which it
// shares with no one); MKNOD to create /dev/net/tun, which container
// runtimes allow but do not put in a container's /dev.
var Capabilities = []corev1.Capability{"NET_ADMIN", "MKNOD"}

// SecurityContext is the gateway container's: every capability dropped
// but Capabilities, no privilege escalation, a read-only root filesystem
// (it writes nothing but the device node, on /dev's own tmpfs) and the
// runtime's default seccomp profile. The namespace-wide sysctls it cannot
// write, /proc/sys being read-only, are either replaced by the links' own
// settings or checked (gateway.Kernel).
func SecurityContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		Capabilities:             &corev1.Capabilities{Add: Capabilities, Drop: []corev1.Capability{"ALL"}},
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// NodesBindingFor is the ClusterRoleBinding of every gateway's
// ServiceAccount to GatewayNodesClusterRole, sorted for a stable object.
func NodesBindingFor(gateways []types.NamespacedName) *rbacv1.ClusterRoleBinding {
	b := &rbacv1.ClusterRoleBinding{
		TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: NodesBinding,
			Labels: map[string]string{consts.ManagedByLabel: consts.ManagedByValue}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: GatewayNodesClusterRole},
		Subjects: []rbacv1.Subject{},
	}
	seen := map[types.NamespacedName]bool{}
	for _, g := range gateways {
		sa := types.NamespacedName{Namespace: g.Namespace, Name: consts.GatewayResourceName(g.Name)}
		if !seen[sa] {
			seen[sa] = true
			b.Subjects = append(b.Subjects, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name})
		}
	}
	slices.SortFunc(b.Subjects, func(x, y rbacv1.Subject) int {
		return strings.Compare(x.Namespace+"/"+x.Name, y.Namespace+"/"+y.Name)
	})
	return b
}
