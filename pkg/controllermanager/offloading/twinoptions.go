package offloading

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/liqo-go/liqo/pkg/twinname"
)

// TwinOptions bound what a consumer's NamespaceMap may obtain from this
// cluster as a provider: which twin names, how many twins, and how many
// objects in each.
type TwinOptions struct {
	// AllowedNames are the twin names, or path.Match patterns ("team-*"), a
	// consumer may ask for besides its own "<anything>-<its cluster id>",
	// as EnforceSameName and most SelectedName requests do: "*" (the
	// default) lets any name through that no other rule refuses.
	AllowedNames []string
	// ReservedNames are names or patterns no twin may take, the
	// consumer's own included, on top of Kubernetes' and Liqo's: the
	// namespaces of software the provider has or may install, which a
	// consumer would otherwise create first. Consumer cluster IDs whose
	// default twin names would hit them are refused at peering.
	ReservedNames []string
	// MaxPerTenant caps the twin namespaces of one consumer.
	MaxPerTenant int
	// Quota is the hard object counts of the ResourceQuota in each twin.
	Quota corev1.ResourceList
	// Egress is the twins' egress policy.
	Egress EgressOptions
	// named are the counts --twin-namespace-quota gave, which
	// ForServiceTypes leaves as they are.
	named map[corev1.ResourceName]bool
}

// Per twin, the node ports and load balancers a consumer gets when the
// provider allows the Service types that take them (--allowed-service-types)
// and --twin-namespace-quota does not say: a few Services' worth each, since
// node ports are a cluster-wide range of some 2,700 ports, and load
// balancers cost the provider money.
const (
	DefaultTwinNodePorts     = 10
	DefaultTwinLoadBalancers = 2
)

// ForServiceTypes are the options for a provider allowing the given
// Service types besides ClusterIP: a count of node ports (NodePort and
// LoadBalancer Services take them) and of load balancers that the default
// leaves at zero, which would refuse every such Service the provider
// allows, is raised to its default unless --twin-namespace-quota named it.
func (o TwinOptions) ForServiceTypes(types []string) TwinOptions {
	raise := func(name corev1.ResourceName, to int64) {
		if q, ok := o.Quota[name]; o.named[name] || (ok && !q.IsZero()) {
			return
		}
		o.Quota[name] = *resource.NewQuantity(to, resource.DecimalSI)
	}
	o.Quota = maps.Clone(o.Quota)
	if o.Quota == nil {
		o.Quota = corev1.ResourceList{}
	}
	if slices.Contains(types, string(corev1.ServiceTypeNodePort)) || slices.Contains(types, string(corev1.ServiceTypeLoadBalancer)) {
		raise(corev1.ResourceServicesNodePorts, DefaultTwinNodePorts)
	}
	if slices.Contains(types, string(corev1.ServiceTypeLoadBalancer)) {
		raise(corev1.ResourceServicesLoadBalancers, DefaultTwinLoadBalancers)
	}
	return o
}

// DefaultMaxTwinsPerTenant is the cap on one consumer's twin namespaces
// when --max-twin-namespaces-per-tenant is not given.
const DefaultMaxTwinsPerTenant = 100

// DefaultTwinQuota is what one twin namespace may hold of what the
// consumer writes there itself: the counts leave room for a thousand
// reflected ConfigMaps, Secrets and Services; node ports and load balancers
// are the provider's own ports and addresses, which no consumer gets unless
// the provider says so.
//
// Pods are not counted by default. A twin's pods are those this cluster
// creates for ShadowPods, each admitted against the tenant's Quota (pods
// included) by the ShadowPod webhook, which the CRD cannot be written
// without. Counting them again cost more than any other guard: the quota
// controller recounts every pod of the namespace at each pod's change (a
// burst of N pods, N² pod evaluations) and the API server's quota admission
// writes the quota's status every few pod creations (at N = 1,000, 0.4
// writes and about 2 ms of the controller manager's CPU per pod), for
// nothing the Quota lets through. --twin-namespace-quota pods=N adds a cap
// per twin.
//
// Counts of custom resources (count/shadowpods.offloading.liqo.io) are left
// to the flag: the quota controller counts a custom resource only from its
// first discovery after the CRD is installed (within 30 seconds), and a
// quota made before then is not counted until its full resync (5 minutes):
// meanwhile the twin waits for it.
func DefaultTwinQuota() corev1.ResourceList {
	n := func(v int64) resource.Quantity { return *resource.NewQuantity(v, resource.DecimalSI) }
	return corev1.ResourceList{
		corev1.ResourceServices:               n(2000),
		corev1.ResourceConfigMaps:             n(2000),
		corev1.ResourceSecrets:                n(2000),
		corev1.ResourcePersistentVolumeClaims: n(100),
		corev1.ResourceServicesLoadBalancers:  n(0),
		corev1.ResourceServicesNodePorts:      n(0),
		"count/ingresses.networking.k8s.io":   n(100),
		// The storage fabric's remote volumes, all of a twin's together.
		corev1.ResourceRequestsStorage: resource.MustParse("100Gi"),
	}
}

// DefaultTwinOptions are the defaults the flags start from: any free name
// but the reserved ones, so that EnforceSameName, which the seeds'
// tutorials use, works on a default install.
func DefaultTwinOptions() TwinOptions {
	return TwinOptions{AllowedNames: []string{"*"}, ReservedNames: twinname.DefaultReserved(),
		MaxPerTenant: DefaultMaxTwinsPerTenant, Quota: DefaultTwinQuota(), Egress: EgressOptions{Mode: EgressPolicyDefault}}
}

// AddFlags binds o to the provider's command-line flags.
func (o *TwinOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.AllowedNames, "allowed-twin-namespaces", o.AllowedNames,
		"comma-separated names or glob patterns (team-*) of twin namespaces consumers may ask for besides their own <namespace>-<consumer cluster id>, as EnforceSameName and SelectedName do; * is any name not reserved and not taken, an empty value none")
	fs.StringSliceVar(&o.ReservedNames, "reserved-twin-namespaces", o.ReservedNames,
		"comma-separated names or glob patterns of namespaces no consumer's twin may take, besides default, kube-*, liqo and liqo-* (liqo-demo aside), which are always refused; consumer cluster IDs whose <namespace>-<id> twins would hit one (system for *-system) are refused at peering")
	fs.IntVar(&o.MaxPerTenant, "max-twin-namespaces-per-tenant", o.MaxPerTenant, "how many twin namespaces one consumer may have on this cluster")
	o.Egress.AddFlags(fs)
	fs.Var(&quotaValue{l: &o.Quota, named: &o.named}, "twin-namespace-quota",
		"object counts of each twin namespace's ResourceQuota, as resource=count,... over the defaults (services, configmaps and secrets 2000, persistentvolumeclaims 100, count/ingresses.networking.k8s.io 100, services.loadbalancers and services.nodeports 0, or 2 and 10 where --allowed-service-types allows LoadBalancer or NodePort; pods are not counted unless given, as the tenant's Quota bounds them; any count/<resource>.<group>), and requests.storage, the size of its remote volumes (100Gi)")
}

// Validate reports the first bad option with its flag.
func (o TwinOptions) Validate() error {
	if err := twinname.ValidatePatterns(o.AllowedNames); err != nil {
		return fmt.Errorf("--allowed-twin-namespaces: %w", err)
	}
	if err := twinname.ValidatePatterns(o.ReservedNames); err != nil {
		return fmt.Errorf("--reserved-twin-namespaces: %w", err)
	}
	if err := o.Egress.Validate(); err != nil {
		return err
	}
	if o.MaxPerTenant < 0 {
		return fmt.Errorf("--max-twin-namespaces-per-tenant must not be negative, got %d", o.MaxPerTenant)
	}
	for _, name := range slices.Sorted(maps.Keys(o.Quota)) {
		if err := checkQuotaEntry(name, o.Quota[name]); err != nil {
			return fmt.Errorf("--twin-namespace-quota: %w", err)
		}
	}
	return nil
}

// countResources are the object counts a ResourceQuota knows by bare name.
var countResources = []corev1.ResourceName{corev1.ResourcePods, corev1.ResourceServices, corev1.ResourceConfigMaps,
	corev1.ResourceSecrets, corev1.ResourcePersistentVolumeClaims, corev1.ResourceServicesLoadBalancers,
	corev1.ResourceServicesNodePorts, corev1.ResourceReplicationControllers, corev1.ResourceQuotas}

// checkQuotaEntry accepts object counts, and requests.storage (the remote
// volumes' sizes): a compute quota (cpu, requests.memory) would refuse
// every pod without requests, which the tenant's Quota already bounds.
func checkQuotaEntry(name corev1.ResourceName, q resource.Quantity) error {
	if name == corev1.ResourceRequestsStorage {
		if q.Sign() < 0 {
			return fmt.Errorf("%s=%s is negative", name, q.String())
		}
		return nil
	}
	if !slices.Contains(countResources, name) && !strings.HasPrefix(string(name), "count/") {
		return fmt.Errorf("%s is not an object count (use pods, services, ... or count/<resource>.<group>)", name)
	}
	if v, ok := q.AsInt64(); !ok || v < 0 || q.Cmp(*resource.NewQuantity(v, resource.DecimalSI)) != 0 {
		return fmt.Errorf("%s=%s is not a whole non-negative count", name, q.String())
	}
	return nil
}

// quotaValue parses resource=count,... into a ResourceList, over what it
// holds already, so that a flag names only the counts it changes.
type quotaValue struct {
	l     *corev1.ResourceList
	named *map[corev1.ResourceName]bool
}

func (v *quotaValue) String() string {
	if v.l == nil {
		return ""
	}
	parts := make([]string, 0, len(*v.l))
	for _, k := range slices.Sorted(maps.Keys(*v.l)) {
		q := (*v.l)[k]
		parts = append(parts, string(k)+"="+q.String())
	}
	return strings.Join(parts, ",")
}

func (v *quotaValue) Set(s string) error {
	out := maps.Clone(*v.l)
	if out == nil {
		out = corev1.ResourceList{}
	}
	for kv := range strings.SplitSeq(s, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || k == "" {
			return errors.New("want resource=count, got " + kv)
		}
		q, err := resource.ParseQuantity(val)
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		if err := checkQuotaEntry(corev1.ResourceName(k), q); err != nil {
			return err
		}
		out[corev1.ResourceName(k)] = q
		if v.named != nil {
			if *v.named == nil {
				*v.named = map[corev1.ResourceName]bool{}
			}
			(*v.named)[corev1.ResourceName(k)] = true
		}
	}
	*v.l = out
	return nil
}

func (v *quotaValue) Type() string { return "counts" }
