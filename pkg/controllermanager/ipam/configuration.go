package ipam

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	ipamv1alpha1 "github.com/liqo-go/liqo/apis/ipam/v1alpha1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/ipam"
	"github.com/liqo-go/liqo/pkg/kit"
)

// ConfigurationLabel names, on a Network, the Configuration it was created
// for.
const ConfigurationLabel = "ipam.liqo.io/configuration"

// ConfigurationReconciler allocates the networks of a peer's Configuration
// and reports them, remapped, in its status.
type ConfigurationReconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
	Options  Options
}

// family is one list of CIDRs of a ClusterConfigCIDR.
type family struct {
	name string
	get  func(*netv1beta1.ClusterConfigCIDR) *[]netv1beta1.CIDR
}

var families = []family{
	{"pod", func(c *netv1beta1.ClusterConfigCIDR) *[]netv1beta1.CIDR { return &c.Pod }},
	{"external", func(c *netv1beta1.ClusterConfigCIDR) *[]netv1beta1.CIDR { return &c.External }},
}

// Reconcile brings one Configuration's Networks, local CIDRs and status in
// line.
func (r *ConfigurationReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var cfg netv1beta1.Configuration
	if err := r.Client.Get(ctx, req.NamespacedName, &cfg); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err) // its Networks go with it
	}
	if !cfg.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	if err := r.syncLocal(ctx, &cfg); err != nil {
		return reconcile.Result{}, err
	}
	before := cfg.DeepCopy()
	cond, err := r.syncNetworks(ctx, &cfg)
	if err != nil {
		return reconcile.Result{}, err
	}
	if !cond.OK {
		cfg.Status.Remote = nil // all or nothing: a half-remapped view routes wrong
	}
	changed := kit.SetCondition(&cfg.Status.Conditions, cfg.Generation, cond)
	if err := kit.PatchStatus(ctx, r.Client, &cfg, before); err != nil {
		return reconcile.Result{}, err
	}
	if err := r.syncLabel(ctx, &cfg, cond.OK); err != nil {
		return reconcile.Result{}, err
	}
	if changed {
		typ := corev1.EventTypeNormal
		if !cond.OK {
			typ = corev1.EventTypeWarning
		}
		if cond.OK || cond.Reason != netv1beta1.ConfigurationReasonWaiting {
			r.Recorder.Event(&cfg, typ, cond.Reason, cond.Message)
		}
	}
	return reconcile.Result{}, nil
}

// syncLocal writes this cluster's own CIDRs into spec.local, as the
// reference system does, for tools that read them there.
func (r *ConfigurationReconciler) syncLocal(ctx context.Context, cfg *netv1beta1.Configuration) error {
	if !r.Options.PodCIDR.IsValid() {
		return nil
	}
	want := &netv1beta1.ClusterConfig{CIDR: netv1beta1.ClusterConfigCIDR{
		Pod:      []netv1beta1.CIDR{netv1beta1.CIDR(r.Options.PodCIDR.String())},
		External: []netv1beta1.CIDR{netv1beta1.CIDR(r.Options.ExternalCIDR.String())},
	}}
	if cfg.Spec.Local != nil && slices.Equal(cfg.Spec.Local.CIDR.Pod, want.CIDR.Pod) && slices.Equal(cfg.Spec.Local.CIDR.External, want.CIDR.External) {
		return nil
	}
	before := cfg.DeepCopy()
	cfg.Spec.Local = want
	return client.IgnoreNotFound(r.Client.Patch(ctx, cfg, client.MergeFrom(before)))
}

// syncNetworks has a Network for every remote CIDR, deletes those of CIDRs
// no longer listed, and fills status.remote from them.
func (r *ConfigurationReconciler) syncNetworks(ctx context.Context, cfg *netv1beta1.Configuration) (kit.Condition, error) {
	cond := kit.Condition{Type: netv1beta1.NetworkCIDRsConfiguredCondition}
	if !r.Options.PodCIDR.IsValid() {
		cond.Reason = netv1beta1.ConfigurationReasonLocalUnknown
		cond.Message = "this cluster's pod CIDR is unknown: start the controller manager with --pod-cidr"
		return cond, nil
	}
	var owned ipamv1alpha1.NetworkList
	if err := r.Client.List(ctx, &owned, client.InNamespace(cfg.Namespace), client.MatchingLabels{ConfigurationLabel: cfg.Name}); err != nil {
		return cond, err
	}
	have := map[string]*ipamv1alpha1.Network{}
	for i := range owned.Items {
		have[owned.Items[i].Name] = &owned.Items[i]
	}
	// Every CIDR is checked before any is allocated: a refused one
	// changes nothing.
	for _, f := range families {
		for _, c := range *f.get(&cfg.Spec.Remote.CIDR) {
			if reason, err := checkRemote(c); err != nil {
				cond.Reason, cond.Message = reason, fmt.Sprintf("spec.remote.cidr.%s: %v", f.name, err)
				return cond, nil
			}
		}
	}
	remote := &netv1beta1.ClusterConfig{}
	wanted := map[string]bool{}
	var waiting, failed []string
	for _, f := range families {
		for _, c := range *f.get(&cfg.Spec.Remote.CIDR) {
			p := netip.MustParsePrefix(string(c)) // checked above
			name := NetworkName(cfg.Name, f.name, p)
			wanted[name] = true
			n, ok := have[name]
			if !ok {
				if err := r.createNetwork(ctx, cfg, name, c); err != nil {
					return cond, err
				}
				waiting = append(waiting, name)
				continue
			}
			switch {
			case kit.IsTrue(n.Status.Conditions, ipamv1alpha1.AllocatedCondition) && n.Status.CIDR != "":
				*f.get(&remote.CIDR) = append(*f.get(&remote.CIDR), n.Status.CIDR)
			case allocatedCondition(n) != nil && allocatedCondition(n).ObservedGeneration == n.Generation:
				failed = append(failed, fmt.Sprintf("%s (%s): %s", name, c, allocatedCondition(n).Message))
			default:
				waiting = append(waiting, name)
			}
		}
	}
	for name, n := range have {
		if !wanted[name] {
			if err := client.IgnoreNotFound(r.Client.Delete(ctx, n)); err != nil {
				return cond, err
			}
		}
	}
	switch {
	case len(failed) > 0:
		cond.Reason, cond.Message = netv1beta1.ConfigurationReasonNotAllocated, "cannot allocate "+strings.Join(failed, "; ")
	case len(waiting) > 0:
		cond.Reason, cond.Message = netv1beta1.ConfigurationReasonWaiting, "waiting for the allocation of "+strings.Join(waiting, ", ")
	default:
		// The allocator kept the networks clear of this cluster's own when
		// it allocated them, but nodes join later: a network of the peer
		// over one of theirs would take their traffic.
		overlap, err := r.overlapsLocal(ctx, remote)
		if err != nil {
			return cond, err
		}
		if overlap != "" {
			cond.Reason, cond.Message = netv1beta1.ConfigurationReasonOverlapsLocal, overlap+
				": nothing is routed to the peer (liqoctl network reset, then connect, allocates its networks again)"
			return cond, nil
		}
		cond.OK, cond.Reason = true, netv1beta1.ConfigurationReasonConfigured
		cond.Message = fmt.Sprintf("the peer's pod CIDRs %v are reached as %v, its external CIDRs %v as %v",
			cfg.Spec.Remote.CIDR.Pod, remote.CIDR.Pod, cfg.Spec.Remote.CIDR.External, remote.CIDR.External)
		cfg.Status.Remote = remote
	}
	return cond, nil
}

// checkRemote checks one CIDR a peer announced, and returns the reason of
// the condition that refuses it with the error.
func checkRemote(c netv1beta1.CIDR) (string, error) {
	p, err := netip.ParsePrefix(string(c))
	if err == nil {
		err = checkPrefix(p)
	}
	if err != nil {
		return netv1beta1.ConfigurationReasonRemoteNotValid, err
	}
	if _, err := ipam.ParsePeerCIDR(string(c)); err != nil {
		return netv1beta1.ConfigurationReasonRemoteRefused, err
	}
	return "", nil
}

// overlapsLocal says which network allocated to the peer overlaps one
// this cluster routes itself, "" when none does.
func (r *ConfigurationReconciler) overlapsLocal(ctx context.Context, remote *netv1beta1.ClusterConfig) (string, error) {
	nodes, err := nodeNetworks(ctx, r.Client)
	if err != nil {
		return "", err
	}
	local := r.Options.routedLocally(nodes)
	for _, c := range slices.Concat(remote.CIDR.Pod, remote.CIDR.External) {
		p, err := netip.ParsePrefix(string(c))
		if err != nil {
			return fmt.Sprintf("the allocated network %q is not a network", c), nil
		}
		for _, l := range local {
			if l.p.Overlaps(p) {
				return fmt.Sprintf("the peer's network allocated at %s overlaps %s, %s", p, l.p, l.what), nil
			}
		}
	}
	return "", nil
}

// allocatedCondition is a Network's Allocated condition, nil when it has none.
func allocatedCondition(n *ipamv1alpha1.Network) *metav1.Condition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == ipamv1alpha1.AllocatedCondition {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

func (r *ConfigurationReconciler) createNetwork(ctx context.Context, cfg *netv1beta1.Configuration, name string, c netv1beta1.CIDR) error {
	n := &ipamv1alpha1.Network{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cfg.Namespace, Labels: map[string]string{
			ConfigurationLabel:    cfg.Name,
			consts.ManagedByLabel: consts.ManagedByValue,
		}},
		Spec: ipamv1alpha1.NetworkSpec{CIDR: c},
	}
	if id := cfg.Labels[consts.RemoteClusterIDLabel]; id != "" {
		n.Labels[consts.RemoteClusterIDLabel] = id
	}
	// Owned: deleting the Configuration (unpeer, network reset) deletes
	// its Networks, which releases them.
	if err := controllerutil.SetControllerReference(cfg, n, r.Client.Scheme()); err != nil {
		return err
	}
	if err := r.Client.Create(ctx, n); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating Network %s/%s: %w", n.Namespace, name, err)
	}
	return nil
}

// syncLabel sets the label tools of Liqo v1.0 and v1.1 wait for.
func (r *ConfigurationReconciler) syncLabel(ctx context.Context, cfg *netv1beta1.Configuration, ok bool) error {
	want := "false"
	if ok {
		want = "true"
	}
	if cfg.Labels[netv1beta1.ConfiguredLabel] == want {
		return nil
	}
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:%q}}}`, netv1beta1.ConfiguredLabel, want)
	return client.IgnoreNotFound(r.Client.Patch(ctx, cfg, client.RawPatch("application/merge-patch+json", patch)))
}

// NetworkName is the Network holding CIDR p of kind family ("pod" or
// "external") of Configuration cfg: stable, so a restart finds it again.
func NetworkName(cfg, family string, p netip.Prefix) string {
	return fmt.Sprintf("%s-%s-%s-%d", cfg, family, strings.ReplaceAll(p.Addr().String(), ".", "-"), p.Bits())
}

// SetupWithManager registers the reconciler: a Configuration is woken when
// one of its Networks changes, and every one when a Node's networks may
// have (see overlapsLocal).
func (r *ConfigurationReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("ipam-configuration").
		For(&netv1beta1.Configuration{}).
		Owns(&ipamv1alpha1.Network{}).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.allConfigurations), builder.WithPredicates(nodeAddressesChanged)).
		Complete(r)
}

func (r *ConfigurationReconciler) allConfigurations(ctx context.Context, _ client.Object) []reconcile.Request {
	var l netv1beta1.ConfigurationList
	if err := r.Client.List(ctx, &l, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the Configurations to check them against a Node's networks")
		return nil
	}
	out := make([]reconcile.Request, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&l.Items[i])})
	}
	return out
}
