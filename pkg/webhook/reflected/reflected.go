package reflected

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/liqo-go/liqo/pkg/webhook/budget"
	"github.com/liqo-go/liqo/pkg/webhook/tenancy"
)

// reflectedValidator admits the objects a consumer's reflection writes in
// its twin namespaces on a provider: objects that ask nothing of the
// provider's nodes, credentials, ingress controllers and other systems
// (by their content, labels or annotations) beyond what the
// ReflectedPolicy allows, and Ingresses claiming no host anyone else on
// the provider serves. Only consumers are judged: the
// provider's administrators and controllers are trusted with their own
// cluster.
type reflectedValidator struct {
	// reader is the manager's cache: namespaces, and Ingresses indexed by
	// ingressHostIndex.
	reader  client.Reader
	decoder admission.Decoder
	policy  ReflectedPolicy
	// budget holds the objects, once acceptable, to the consumer's
	// budget.ObjectBudget.
	budget *budget.Guard
}

var _ admission.Handler = (*reflectedValidator)(nil)

// NewValidator is the handler of the reflected objects consumers write,
// reading namespaces and Ingresses (indexed by IndexIngressHosts) from
// reader, holding them to policy and to guard's budget.
func NewValidator(reader client.Reader, decoder admission.Decoder, policy ReflectedPolicy, guard *budget.Guard) admission.Handler {
	return &reflectedValidator{reader: reader, decoder: decoder, policy: policy, budget: guard}
}

// IndexIngressHosts indexes the Ingresses of indexer's cache by the hosts
// they claim, for the validator to find a host's other claimants.
func IndexIngressHosts(ctx context.Context, indexer client.FieldIndexer) error {
	return indexer.IndexField(ctx, &networkingv1.Ingress{}, ingressHostIndex, hostIndexKeys)
}

// Handle validates one create or update of a reflected object.
func (v *reflectedValidator) Handle(ctx context.Context, req admission.Request) admission.Response {
	id, isConsumer, err := tenancy.Requester(req.UserInfo)
	if err != nil {
		return admission.Denied(err.Error())
	}
	if !isConsumer {
		return admission.Allowed("")
	}
	var ns corev1.Namespace
	if err := v.reader.Get(ctx, types.NamespacedName{Name: req.Namespace}, &ns); err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("reading namespace %s: %w", req.Namespace, err))
	}
	// RBAC grants a consumer its own twins only; a grant made by mistake
	// elsewhere must not let it place objects among another's.
	if owner := tenancy.ConsumerOf(&ns); owner != id {
		return admission.Denied(fmt.Sprintf("consumer %s may not write %s in namespace %s, which is not one of its twin namespaces",
			id, req.Resource.Resource, req.Namespace))
	}

	gr := schema.GroupResource{Group: req.Resource.Group, Resource: req.Resource.Resource}
	obj, reflected := budget.NewObject(gr)
	if obj == nil || !reflected {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("the reflected objects' webhook does not judge %s", gr))
	}
	if err := v.decoder.Decode(req, obj); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	var old client.Object
	if req.Operation == admissionv1.Update {
		old, _ = budget.NewObject(gr)
		if err := v.decoder.DecodeRaw(req.OldObject, old); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
	}
	var bad []string
	switch o := obj.(type) {
	case *corev1.Service:
		bad = v.policy.vetService(o)
	case *corev1.Secret:
		bad = vetSecret(o)
	case *networkingv1.Ingress:
		bad = v.policy.vetIngress(o)
		conflicts, err := v.hostConflicts(ctx, id, o)
		if err != nil {
			return admission.Errored(http.StatusInternalServerError, err)
		}
		bad = append(bad, conflicts...)
	case *corev1.PersistentVolumeClaim:
		bad = v.policy.vetPVC(o)
	}
	bad = append(bad, v.policy.VetMetadata(id, gr, obj)...)
	if len(bad) > 0 {
		return admission.Denied(strings.Join(bad, "; "))
	}
	return v.budget.Respond(ctx, req, id, gr, obj, old)
}

// ingressHostIndex indexes Ingresses by the hosts they claim (rules and
// TLS), and each plain host also under the wildcard of its parent domain,
// so that both directions of a wildcard overlap are one lookup away.
const ingressHostIndex = "liqo.io/ingress-host"

// claimedHost is a host an Ingress claims, with the field claiming it.
type claimedHost struct {
	path *field.Path
	host string
}

// ingressHosts are the hosts an Ingress claims: those of its rules and its
// TLS sections (the certificate a controller serves for a host is as much
// a claim as a route).
func ingressHosts(ing *networkingv1.Ingress) []claimedHost {
	var hosts []claimedHost
	rules := field.NewPath("spec", "rules")
	for i, r := range ing.Spec.Rules {
		if r.Host != "" {
			hosts = append(hosts, claimedHost{rules.Index(i).Child("host"), r.Host})
		}
	}
	tls := field.NewPath("spec", "tls")
	for i, t := range ing.Spec.TLS {
		for j, h := range t.Hosts {
			if h != "" {
				hosts = append(hosts, claimedHost{tls.Index(i).Child("hosts").Index(j), h})
			}
		}
	}
	return hosts
}

// IngressCache is the Ingress entry of the cache options of a manager
// running the webhooks: every Ingress of the cluster, for the hosts they
// claim (ingressHostIndex), and nothing else of them. The annotations and
// backends of the consumers' Ingresses are theirs to choose, and the
// webhook reads none of another Ingress's.
func IngressCache() cache.ByObject {
	return cache.ByObject{Transform: ingressHostsOnly}
}

// ingressHostsOnly trims an Ingress to its identity and the hosts it
// claims (ingressHosts).
func ingressHostsOnly(obj any) (any, error) {
	ing, ok := obj.(*networkingv1.Ingress)
	if !ok {
		return obj, nil
	}
	trimmed := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: ing.Name, Namespace: ing.Namespace, UID: ing.UID,
		ResourceVersion: ing.ResourceVersion}}
	for _, r := range ing.Spec.Rules {
		trimmed.Spec.Rules = append(trimmed.Spec.Rules, networkingv1.IngressRule{Host: r.Host})
	}
	for _, t := range ing.Spec.TLS {
		trimmed.Spec.TLS = append(trimmed.Spec.TLS, networkingv1.IngressTLS{Hosts: t.Hosts})
	}
	return trimmed, nil
}

// hostIndexKeys are the ingressHostIndex keys of an Ingress.
func hostIndexKeys(o client.Object) []string {
	ing, ok := o.(*networkingv1.Ingress)
	if !ok {
		return nil
	}
	keys := sets.New[string]()
	for _, c := range ingressHosts(ing) {
		keys.Insert(lookupKeys(c.host)...)
	}
	return sets.List(keys)
}

// lookupKeys are the index keys under which the Ingresses that may
// overlap host are found: host itself and, for a plain host, the wildcard
// of its parent domain (*.example.com covers shop.example.com; a wildcard
// covers exactly one label, as the Ingress API defines).
func lookupKeys(host string) []string {
	keys := []string{host}
	if parent, ok := wildcardOf(host); ok {
		keys = append(keys, parent)
	}
	return keys
}

// wildcardOf is the wildcard that covers a plain host: *.example.com for
// shop.example.com; none for a wildcard or a single-label host.
func wildcardOf(host string) (string, bool) {
	if strings.HasPrefix(host, "*.") {
		return "", false
	}
	_, parent, found := strings.Cut(host, ".")
	if !found {
		return "", false
	}
	return "*." + parent, true
}

// overlap tells whether two hosts reach the same requests.
func overlap(a, b string) bool {
	if a == b {
		return true
	}
	wa, okA := wildcardOf(a)
	wb, okB := wildcardOf(b)
	return okA && wa == b || okB && wb == a
}

// hostConflicts refuses the hosts of ing that another Ingress on the
// provider already claims, but those of the consumer's own twins: another
// consumer's, or the provider's own. Claiming one would let the consumer
// take requests meant for them from the ingress controllers (which merge
// the paths of Ingresses sharing a host, and prefer a plain host to a
// wildcard). The message does not say whose host it is: a consumer has no
// business learning its fellow tenants' namespaces. Two consumers claiming
// one host at the same instant may both pass, as the cache may not have
// either yet.
func (v *reflectedValidator) hostConflicts(ctx context.Context, consumer string, ing *networkingv1.Ingress) ([]string, error) {
	var bad []string
	owners := map[string]string{}
	for _, c := range ingressHosts(ing) {
		taken, err := v.hostTaken(ctx, consumer, ing, c.host, owners)
		if err != nil {
			return nil, err
		}
		if taken {
			bad = append(bad, fmt.Sprintf("%s %s overlaps a host another tenant of this provider, or the provider itself, already serves: "+
				"a consumer may only claim hosts no one else here does", c.path, c.host))
		}
	}
	return bad, nil
}

// hostTaken tells whether an Ingress other than ing, outside the
// consumer's twins, claims a host overlapping host. owners caches the
// consumers of the namespaces already read.
func (v *reflectedValidator) hostTaken(ctx context.Context, consumer string, ing *networkingv1.Ingress, host string,
	owners map[string]string) (bool, error) {
	for _, key := range lookupKeys(host) {
		var list networkingv1.IngressList
		if err := v.reader.List(ctx, &list, client.MatchingFields{ingressHostIndex: key}); err != nil {
			return false, fmt.Errorf("listing the Ingresses claiming %s: %w", key, err)
		}
		for i := range list.Items {
			other := &list.Items[i]
			if other.Namespace == ing.Namespace && other.Name == ing.Name {
				continue
			}
			owner, known := owners[other.Namespace]
			if !known {
				var ns corev1.Namespace
				// A namespace gone from the cache is no twin of the
				// consumer's: its Ingresses still count as someone else's.
				if err := v.reader.Get(ctx, types.NamespacedName{Name: other.Namespace}, &ns); client.IgnoreNotFound(err) != nil {
					return false, fmt.Errorf("reading namespace %s: %w", other.Namespace, err)
				}
				owner = tenancy.ConsumerOf(&ns)
				owners[other.Namespace] = owner
			}
			if owner == consumer {
				continue
			}
			for _, c := range ingressHosts(other) {
				if overlap(host, c.host) {
					return true, nil
				}
			}
		}
	}
	return false, nil
}
