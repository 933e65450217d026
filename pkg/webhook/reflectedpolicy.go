package webhook

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ReflectedPolicy is what a provider lets its consumers keep in their twin
// namespaces besides pods: the Services, Ingresses and Secrets the
// reflection copies there, which the provider's own components (kube-proxy,
// DNS, ingress controllers, the token controller) then act upon. The zero
// value is the safe default: ClusterIP Services without external IPs,
// Ingresses naming their own hosts without snippets, no ServiceAccount
// token Secrets.
type ReflectedPolicy struct {
	// ServiceTypes consumers' Services may have besides ClusterIP
	// (NodePort, LoadBalancer, ExternalName).
	ServiceTypes []string
	// ExternalIPs lets consumers' Services carry spec.externalIPs.
	ExternalIPs bool
	// IngressAnnotations are annotation keys, or "<prefix>/*" patterns,
	// consumers' Ingresses may not carry, besides every key containing
	// "snippet".
	IngressAnnotations []string
	// VirtualStorageClass is this cluster's virtual StorageClass, which
	// consumers' PVCs may not use (set from the storage options).
	VirtualStorageClass string
}

// optionalServiceTypes are the Service types a provider may allow, each
// with what it would hand a consumer.
var optionalServiceTypes = map[corev1.ServiceType]string{
	corev1.ServiceTypeNodePort:     "it opens its ports on every node of the provider",
	corev1.ServiceTypeLoadBalancer: "it takes an address from the provider's load balancer, and opens node ports on every node",
	corev1.ServiceTypeExternalName: "the provider's DNS, and any ingress controller routing to the Service, would send its traffic to " +
		"spec.externalName, an address of the consumer's choosing seen from inside the provider's network",
}

// serviceTypeRule names the provider's setting that allows Service types,
// so that a consumer told of a refusal knows what to ask the provider for.
const serviceTypeRule = "offloading.reflectedPolicy.allowedServiceTypes, --allowed-service-types"

// AddFlags adds the policy's flags to fs.
func (p *ReflectedPolicy) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&p.ServiceTypes, "allowed-service-types", p.ServiceTypes,
		"types consumers' reflected Services may have besides ClusterIP: NodePort, LoadBalancer, ExternalName (default: none)")
	fs.BoolVar(&p.ExternalIPs, "allow-external-ips", p.ExternalIPs,
		"let consumers' reflected Services carry spec.externalIPs, which every node routes to them whoever owns the addresses (CVE-2020-8554)")
	fs.StringSliceVar(&p.IngressAnnotations, "denied-ingress-annotations", p.IngressAnnotations,
		"annotation keys, or <prefix>/* patterns, consumers' reflected Ingresses may not carry besides every key containing \"snippet\" "+
			"(e.g. nginx.ingress.kubernetes.io/auth-url)")
}

// Validate reports the first bad setting in words a user can act on.
func (p *ReflectedPolicy) Validate() error {
	for _, t := range p.ServiceTypes {
		if _, ok := optionalServiceTypes[corev1.ServiceType(t)]; !ok && t != string(corev1.ServiceTypeClusterIP) {
			return fmt.Errorf("--allowed-service-types: %q is no Service type (ClusterIP, NodePort, LoadBalancer or ExternalName)", t)
		}
	}
	for _, a := range p.IngressAnnotations {
		if err := validAnnotationPattern(a); err != nil {
			return fmt.Errorf("--denied-ingress-annotations: %w", err)
		}
	}
	return nil
}

// vetService lists what a consumer's Service may not ask of the provider.
func (p *ReflectedPolicy) vetService(s *corev1.Service) []string {
	var bad []string
	spec := field.NewPath("spec")
	if len(s.Spec.ExternalIPs) > 0 && !p.ExternalIPs {
		bad = append(bad, fmt.Sprintf("%s must be empty, got %v: every node of the provider would route the traffic for those addresses "+
			"to the consumer's pods, whoever owns them (CVE-2020-8554)", spec.Child("externalIPs"), s.Spec.ExternalIPs))
	}
	// The API server defaults an empty type to ClusterIP before we see it.
	if why, optional := optionalServiceTypes[s.Spec.Type]; optional && !slices.Contains(p.ServiceTypes, string(s.Spec.Type)) {
		bad = append(bad, fmt.Sprintf("%s %s is not allowed on this provider, which allows %s (%s): %s",
			spec.Child("type"), s.Spec.Type, strings.Join(p.serviceTypes(), ", "), serviceTypeRule, why))
	}
	return bad
}

// serviceTypes are the allowed Service types, ClusterIP first.
func (p *ReflectedPolicy) serviceTypes() []string {
	types := []string{string(corev1.ServiceTypeClusterIP)}
	for _, t := range p.ServiceTypes {
		if !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	return types
}

// vetSecret lists what a consumer's Secret may not ask of the provider.
func vetSecret(s *corev1.Secret) []string {
	if s.Type != corev1.SecretTypeServiceAccountToken {
		return nil
	}
	// The token controller fills such a Secret with a token of the named
	// ServiceAccount of the namespace (each twin has its "default"): a
	// credential of the provider's. The consumer's pods get their tokens
	// from the consumer, as Opaque Secrets.
	return []string{fmt.Sprintf("%s must not be %s: the provider's token controller would fill it with a token of its ServiceAccount %q; "+
		"a consumer's pods get their tokens from the consumer", field.NewPath("type"), s.Type, s.Annotations[corev1.ServiceAccountNameKey])}
}

// vetIngress lists what a consumer's Ingress may not ask of the provider,
// but for hosts others serve (reflectedValidator.hostConflicts): a rule
// or a default backend for every host, and annotations that ingress
// controllers paste into their configuration.
func (p *ReflectedPolicy) vetIngress(ing *networkingv1.Ingress) []string {
	var bad []string
	if ing.Spec.DefaultBackend != nil {
		bad = append(bad, fmt.Sprintf("%s must not be set: it would serve every request the provider's ingress controller does not "+
			"otherwise route; name the consumer's hosts in rules instead", field.NewPath("spec", "defaultBackend")))
	}
	rules := field.NewPath("spec", "rules")
	for i, r := range ing.Spec.Rules {
		if r.Host == "" {
			bad = append(bad, fmt.Sprintf("%s must be set: a rule without a host serves every host the provider's ingress controller "+
				"does not otherwise know, other tenants' included", rules.Index(i).Child("host")))
		}
	}
	annotations := field.NewPath("metadata", "annotations")
	for _, k := range sets.List(sets.KeySet(ing.Annotations)) {
		switch {
		case strings.Contains(strings.ToLower(k), "snippet"):
			bad = append(bad, fmt.Sprintf("%s is not allowed: ingress controllers paste snippets into the configuration they run for "+
				"every tenant's traffic, with their own credentials at hand", annotations.Key(k)))
		case p.ingressAnnotationDenied(k):
			bad = append(bad, fmt.Sprintf("%s is not allowed on this provider", annotations.Key(k)))
		}
	}
	return bad
}

// ingressAnnotationDenied tells whether key is one of IngressAnnotations,
// or under one of their <prefix>/*.
func (p *ReflectedPolicy) ingressAnnotationDenied(key string) bool {
	prefix, _, found := strings.Cut(key, "/")
	return slices.Contains(p.IngressAnnotations, key) || found && matchesAnnotation(p.IngressAnnotations, key, prefix)
}

// vetPVC lists what a consumer's PVC (the storage fabric's remote volume
// of an offloaded pod) may not ask of the provider (vetClaimSpec).
func (p *ReflectedPolicy) vetPVC(pvc *corev1.PersistentVolumeClaim) []string {
	return vetClaimSpec(&pvc.Spec, field.NewPath("spec"), p.VirtualStorageClass)
}
