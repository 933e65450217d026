package twinname

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/liqo-go/liqo/pkg/consts"
)

// Example is the name the seed documentation gives the namespace its
// tutorials offload, EnforceSameName included: liqo-* is otherwise Liqo's.
const Example = "liqo-demo"

// fixed are the names no twin takes whatever the provider's flags, unless
// they are the consumer's own "<namespace>-<id>" (Kubernetes and Liqo name
// their namespaces by prefix, never with a consumer's ID at the end, and
// the seeds' DefaultName twins are "liqo-demo-<id>"): Kubernetes' own and
// future ones, and Liqo's, its tenant namespaces aside (refused always,
// see Check).
var fixed = []string{"default", "kube-*", "liqo", "liqo-*"}

// wellKnown are namespaces that exist from a cluster's creation or from
// Liqo's; their suffixes make cluster IDs the provider refuses (CheckID),
// since the ID's DefaultName twins would include them.
var wellKnown = []string{"kube-system", "kube-public", "kube-node-lease", "liqo-storage"}

// DefaultReserved is the default of the provider's configurable list: the
// namespaces of widely installed cluster software, which a consumer would
// otherwise create first (and be granted rights in) before the provider
// installs it. Any "*-system" is there because that is the convention most
// operators follow.
func DefaultReserved() []string {
	return []string{
		"*-system", "argocd", "cattle-*", "cert-manager", "cilium", "external-dns", "external-secrets",
		"gpu-operator", "ingress-nginx", "istio-*", "keda", "knative-*", "kubernetes-dashboard", "kyverno",
		"linkerd", "linkerd-*", "local-path-storage", "logging", "monitoring", "olm", "openshift", "openshift-*",
		"operators", "prometheus", "rook-ceph", "tigera-operator", "velero", "vault",
	}
}

// Rules are a provider's rules for the names of its consumers' twins.
type Rules struct {
	// Allowed are the names, or path.Match patterns, a consumer may have
	// besides its own "<anything>-<its id>"; "*" lets EnforceSameName and
	// SelectedName take any name that no other rule refuses.
	Allowed []string
	// Reserved are the names, or patterns, no twin may take, the
	// consumer's own included: the provider's configurable list.
	Reserved []string
}

// Refusal is why a consumer may not have a twin name.
type Refusal struct {
	// Invalid is set when the name is no DNS label.
	Invalid bool
	Message string
}

func (r *Refusal) Error() string { return r.Message }

// ErrPattern is wrapped by ValidatePatterns's errors.
var ErrPattern = errors.New("not a name or glob pattern")

// ValidatePatterns checks the names and patterns of a list.
func ValidatePatterns(ps []string) error {
	for _, p := range ps {
		if _, err := path.Match(p, ""); err != nil || p == "" {
			return fmt.Errorf("%q: %w", p, ErrPattern)
		}
	}
	return nil
}

// Check says why consumer may not have a twin named name, or nil if it
// may; whether the name is free is the caller's to check. In order: the
// name must be a DNS label; never a tenant namespace's name; never one of
// another tenant ("<anything>-<id>" for the longest tenant id it ends in,
// so that consumer b asking for "x-a-b" while a-b is a tenant is refused);
// never Kubernetes' nor Liqo's unless it is the consumer's own; never
// reserved by the provider; then the consumer's own names pass, and others
// must be allowed.
// tenants are the cluster IDs of the provider's tenant namespaces.
// Patterns were validated: a bad one matches nothing.
func (r Rules) Check(consumer, name string, tenants []string) *Refusal {
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return &Refusal{Invalid: true, Message: fmt.Sprintf("namespace name %q is not a DNS label: %s", name, strings.Join(errs, "; "))}
	}
	if _, ok := consts.ClusterIDOfTenantNamespace(name); ok {
		return &Refusal{Message: fmt.Sprintf("namespace name %q has the prefix of this cluster's tenant namespaces, which no twin may take", name)}
	}
	owner := Owner(name, append([]string{consumer}, tenants...))
	if owner != "" && owner != consumer {
		return &Refusal{Message: fmt.Sprintf("namespace name %q ends in -%s: it is a twin name of cluster %s, not of %s, whose twin names end in -%s",
			name, owner, owner, consumer, consumer)}
	}
	if p := Fixed(name); p != "" && owner != consumer {
		return &Refusal{Message: fmt.Sprintf("namespace name %q is reserved on every cluster (%s: Kubernetes' and Liqo's namespaces): "+
			"offload with the DefaultName strategy, or another name", name, p)}
	}
	if p := Match(name, r.Reserved); p != "" {
		return &Refusal{Message: fmt.Sprintf("namespace name %q is reserved on this cluster (%q in the provider's --reserved-twin-namespaces, for software it may install): "+
			"offload with the DefaultName strategy, or another name", name, p)}
	}
	if owner == consumer {
		return nil
	}
	if Match(name, r.Allowed) != "" {
		return nil
	}
	return &Refusal{Message: fmt.Sprintf("namespace name %q does not end in -%s (the DefaultName strategy's <namespace>-%s) and the provider's --allowed-twin-namespaces does not list it: "+
		"offload with the DefaultName strategy, or ask the provider's administrators to allow the name", name, consumer, consumer)}
}

// Fixed is the rule of the names reserved on every cluster that name
// matches, or "".
func Fixed(name string) string {
	if name == Example {
		return ""
	}
	return Match(name, fixed)
}

// Match is the first of patterns that name matches, or "".
func Match(name string, patterns []string) string {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return p
		}
	}
	return ""
}

// Owner is the longest of ids such that name is "<something>-<id>", or "".
func Owner(name string, ids []string) string {
	owner := ""
	for _, id := range ids {
		if len(id) > len(owner) && len(name) > len(id)+1 && strings.HasSuffix(name, "-"+id) {
			owner = id
		}
	}
	return owner
}

// CheckID refuses a consumer cluster ID whose DefaultName twins
// "<namespace>-<id>" would include a well-known namespace or one the
// provider reserves (reserved: its configurable list): "system" makes
// "kube-system" and every "*-system", "nginx" makes "ingress-nginx". The
// twin-name rules refuse those names anyway; refusing the ID at peering
// says so once, before anything is offloaded. The cluster ID's own syntax
// is consts.ValidateClusterID's.
func CheckID(id string, reserved []string) error {
	for _, list := range [][]string{wellKnown, reserved} {
		for _, p := range list {
			if endsWithID(p, id) {
				return fmt.Errorf("cluster ID %q is not accepted by this provider: its default twin namespace names, <namespace>-%s, would include %q, "+
					"a namespace this cluster has or reserves; install the consumer with another --cluster-name", id, id, p)
			}
		}
	}
	return nil
}

// endsWithID reports whether some name matching p is "<something>-<id>"
// because of p's literal tail: "*-system" and "kube-system" for "system".
// A pure suffix pattern ("*-system") is exact: it also catches an id that
// ends in its suffix ("a-system"), every one of whose default twins it
// matches. A name matching p only through a wildcard ("istio-*" for any
// id) is the twin-name rules' to refuse, not a reason to refuse the ID.
func endsWithID(p, id string) bool {
	if id == "" {
		return false
	}
	tail, wild := p, false
	if i := strings.LastIndexAny(p, `*?]\`); i >= 0 {
		tail, wild = p[i+1:], true
	}
	if strings.HasSuffix(tail, "-"+id) && (wild || len(tail) > len(id)+1) {
		return true
	}
	suffixOnly := wild && strings.HasPrefix(p, "*") && !strings.ContainsAny(p[1:], `*?[]\`)
	return suffixOnly && strings.HasSuffix("-"+id, tail)
}
