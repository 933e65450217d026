package fabric

import (
	"maps"
	"net/netip"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/kit"
)

// Name of the DaemonSet, its ServiceAccount, ClusterRole and binding.
const Name = "liqo-fabric"

// Options are the agent's settings.
type Options struct {
	// Image is the agent's image (cmd/liqo-fabric).
	Image string
	// PullPolicy of its pods.
	PullPolicy corev1.PullPolicy
	// PodCIDR is the cluster's pod network.
	PodCIDR netip.Prefix
	// Owner owns the agent's objects.
	Owner kit.InstallOwner
	// MTU of the overlay links.
	MTU int
}

// Validate tells what is wrong with o.
func (o Options) Validate() error {
	return kit.ValidateImage("fabric", o.Image, o.PullPolicy)
}

func labels() map[string]string {
	return map[string]string{consts.ManagedByLabel: consts.ManagedByValue, "app.kubernetes.io/name": Name,
		"app.kubernetes.io/part-of": "liqo"}
}

// Rules are the agent's rights: it reads gateways and Configurations,
// nothing else.
func Rules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{{APIGroups: []string{netv1beta1.GroupVersion.Group},
		Resources: []string{"gatewayservers", "gatewayclients", "configurations"}, Verbs: []string{"get", "list", "watch"}}}
}

// Objects are what the agent needs, in apply order.
func Objects(o Options, namespace string) []client.Object {
	meta := metav1.ObjectMeta{Name: Name, Labels: labels()}
	nsMeta := *meta.DeepCopy()
	nsMeta.Namespace = namespace
	sa := &corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: nsMeta}
	role := &rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
		ObjectMeta: meta, Rules: Rules()}
	binding := &rbacv1.ClusterRoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
		ObjectMeta: meta, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: Name}}}
	objs := []client.Object{sa, role, binding, DaemonSet(o, namespace)}
	for _, obj := range objs {
		o.Owner.Own(obj)
	}
	return objs
}

// DaemonSet is the agent on every node but the virtual ones: in the node's
// network namespace, with the rights to manage links, routes and nftables
// there (NET_ADMIN) and nothing more.
func DaemonSet(o Options, namespace string) *appsv1.DaemonSet {
	mtu := o.MTU
	if mtu == 0 {
		mtu = netv1beta1.DefaultMTU
	}
	sel := map[string]string{"app.kubernetes.io/name": Name}
	c := corev1.Container{
		Name: "fabric", Image: o.Image, ImagePullPolicy: o.PullPolicy,
		Args: []string{"--pod-cidr=" + o.PodCIDR.String(), "--mtu=" + strconv.Itoa(mtu)},
		Env: []corev1.EnvVar{{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}},
		SecurityContext: &corev1.SecurityContext{
			Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}, Drop: []corev1.Capability{"ALL"}},
		},
	}
	return &appsv1.DaemonSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "DaemonSet"},
		ObjectMeta: metav1.ObjectMeta{Name: Name, Namespace: namespace, Labels: labels()},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: mergeLabels(labels(), sel)},
				Spec: corev1.PodSpec{
					ServiceAccountName:            Name,
					HostNetwork:                   true,
					DNSPolicy:                     corev1.DNSClusterFirstWithHostNet,
					PriorityClassName:             "system-node-critical",
					TerminationGracePeriodSeconds: ptr.To(int64(5)),
					Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					Affinity:                      kit.AvoidVirtualNodes(),
					Containers:                    []corev1.Container{c},
				},
			},
		},
	}
}

func mergeLabels(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}
