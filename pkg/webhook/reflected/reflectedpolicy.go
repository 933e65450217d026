package reflected

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
	"github.com/liqo-go/liqo/pkg/webhook/podpolicy"
	"github.com/liqo-go/liqo/pkg/webhook/tenancy"
)

// ReflectedPolicy is what a provider lets its consumers keep in their twin
// namespaces besides pods: the Services, Ingresses and Secrets the
// reflection copies there, which the provider's own components (kube-proxy,
// DNS, ingress controllers, the token controller) then act upon. The zero
// value is the safe default: ClusterIP Services without external IPs,
// no Ingresses (until the provider names the ingress classes that may
// serve them), no ServiceAccount token Secrets, and only the labels and
// annotations known to be inert on the provider.
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
	// IngressClasses are the only ingress classes consumers' Ingresses may
	// be served by (spec.ingressClassName, or the legacy
	// kubernetes.io/ingress.class annotation). Empty, the default:
	// consumers' Ingresses are refused. An ingress controller is the
	// provider's, shared by its tenants and holding its certificates and
	// addresses: which of them may take a consumer's routes is the
	// provider's decision, not the consumer's. The reflection leaves the
	// class empty and the API server fills in the provider's default
	// class, so a provider that opts in (allowedIngressClasses: [nginx],
	// as the global ingress tutorial needs) gets its consumers' Ingresses
	// on the class it chose.
	IngressClasses []string
	// Annotations consumers' reflected objects may carry besides
	// unprefixed keys and the built-in inert ones
	// (builtInReflectedAnnotations): exact keys, or "<prefix>/*"
	// (k8gb.io/*, for the global ingress tutorial).
	Annotations []string
	// Labels consumers' reflected objects may carry besides unprefixed
	// keys and the built-in inert ones (podpolicy.BuiltInLabels): exact keys, or
	// "<prefix>/*".
	Labels []string
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

// The chart values and flags of the rules, named in refusals so that the
// consumer can tell the provider's administrator what to change.
const (
	reflectedAnnotationRule = "offloading.reflectedPolicy.allowedAnnotations (--allowed-reflected-annotations)"
	reflectedLabelRule      = "offloading.reflectedPolicy.allowedLabels (--allowed-reflected-labels)"
	ingressClassRule        = "offloading.reflectedPolicy.allowedIngressClasses (--allowed-ingress-classes)"
	originRule              = "the reflection's origin rule (fixed)"
	serviceTypeRule         = "offloading.reflectedPolicy.allowedServiceTypes, --allowed-service-types"
)

// AddFlags adds the policy's flags to fs.
func (p *ReflectedPolicy) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&p.ServiceTypes, "allowed-service-types", p.ServiceTypes,
		"types consumers' reflected Services may have besides ClusterIP: NodePort, LoadBalancer, ExternalName (default: none)")
	fs.BoolVar(&p.ExternalIPs, "allow-external-ips", p.ExternalIPs,
		"let consumers' reflected Services carry spec.externalIPs, which every node routes to them whoever owns the addresses (CVE-2020-8554)")
	fs.StringSliceVar(&p.IngressAnnotations, "denied-ingress-annotations", p.IngressAnnotations,
		"annotation keys, or <prefix>/* patterns, consumers' reflected Ingresses may not carry besides every key containing \"snippet\" "+
			"(e.g. nginx.ingress.kubernetes.io/auth-url)")
	fs.StringSliceVar(&p.IngressClasses, "allowed-ingress-classes", p.IngressClasses,
		"the only ingress classes consumers' reflected Ingresses may be served by (spec.ingressClassName, filled in with this cluster's default "+
			"class, or kubernetes.io/ingress.class; default: none, consumers' Ingresses are refused)")
	fs.StringSliceVar(&p.Annotations, "allowed-reflected-annotations", p.Annotations,
		"annotation keys, or <prefix>/* patterns, consumers' reflected objects may carry besides unprefixed keys and the built-in inert ones "+
			"(e.g. k8gb.io/*, nginx.ingress.kubernetes.io/rewrite-target)")
	fs.StringSliceVar(&p.Labels, "allowed-reflected-labels", p.Labels,
		"label keys, or <prefix>/* patterns, consumers' reflected objects may carry besides unprefixed keys and the built-in inert ones "+
			"(app.kubernetes.io/*, helm.sh/chart; e.g. example.com/team)")
}

// Validate reports the first bad setting in words a user can act on.
func (p *ReflectedPolicy) Validate() error {
	for _, t := range p.ServiceTypes {
		if _, ok := optionalServiceTypes[corev1.ServiceType(t)]; !ok && t != string(corev1.ServiceTypeClusterIP) {
			return fmt.Errorf("--allowed-service-types: %q is no Service type (ClusterIP, NodePort, LoadBalancer or ExternalName)", t)
		}
	}
	for _, a := range p.IngressAnnotations {
		if err := podpolicy.ValidAnnotationPattern(a); err != nil {
			return fmt.Errorf("--denied-ingress-annotations: %w", err)
		}
	}
	for _, c := range p.IngressClasses {
		if errs := validation.IsDNS1123Subdomain(c); len(errs) > 0 {
			return fmt.Errorf("--allowed-ingress-classes: %q is no ingress class name: %s", c, strings.Join(errs, "; "))
		}
	}
	for _, a := range p.Annotations {
		if err := podpolicy.ValidAnnotationPattern(a); err != nil {
			return fmt.Errorf("--allowed-reflected-annotations: %w", err)
		}
	}
	for _, l := range p.Labels {
		if err := podpolicy.ValidAnnotationPattern(l); err != nil {
			return fmt.Errorf("--allowed-reflected-labels: %w", err)
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
	bad = append(bad, p.vetIngressClass(ing)...)
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
	return slices.Contains(p.IngressAnnotations, key) || found && podpolicy.MatchesAnnotation(p.IngressAnnotations, key, prefix)
}

// vetPVC lists what a consumer's PVC (the storage fabric's remote volume
// of an offloaded pod) may not ask of the provider (podpolicy.VetClaimSpec).
func (p *ReflectedPolicy) vetPVC(pvc *corev1.PersistentVolumeClaim) []string {
	return podpolicy.VetClaimSpec(&pvc.Spec, field.NewPath("spec"), p.VirtualStorageClass)
}

// vetIngressClass refuses an Ingress no allowed class serves. The class is
// spec.ingressClassName, or the legacy annotation (the API server refuses
// both at once); an Ingress with neither reaches us only where the provider
// has no default IngressClass to fill in, and would be served by any
// controller taking Ingresses without a class: refused too.
func (p *ReflectedPolicy) vetIngressClass(ing *networkingv1.Ingress) []string {
	allowed := "allows " + podpolicy.OrNone(p.IngressClasses)
	if len(p.IngressClasses) == 0 {
		allowed = "serves no consumer's Ingress until its administrator names the ingress classes that may"
	}
	var bad []string
	if c := ing.Spec.IngressClassName; c != nil && !slices.Contains(p.IngressClasses, *c) {
		bad = append(bad, fmt.Sprintf("%s %q is not allowed on this provider, which %s", field.NewPath("spec", "ingressClassName"), *c, allowed))
	}
	legacy, hasLegacy := ing.Annotations[ingressClassAnnotation]
	if hasLegacy && !slices.Contains(p.IngressClasses, legacy) {
		bad = append(bad, fmt.Sprintf("%s %q is not allowed on this provider, which %s",
			field.NewPath("metadata", "annotations").Key(ingressClassAnnotation), legacy, allowed))
	}
	if ing.Spec.IngressClassName == nil && !hasLegacy {
		bad = append(bad, fmt.Sprintf("%s is not set, and this provider has no default IngressClass to set it: a controller taking "+
			"Ingresses without a class would serve it; this provider %s", field.NewPath("spec", "ingressClassName"), allowed))
	}
	if len(bad) == 0 {
		return nil
	}
	return []string{strings.Join(bad, "; ") + ": an ingress controller is the provider's, shared by its tenants, with its addresses " +
		"and certificates [rule: " + ingressClassRule + "]"}
}

// ingressClassAnnotation is the class an Ingress names before
// spec.ingressClassName existed, which controllers still honour.
const ingressClassAnnotation = "kubernetes.io/ingress.class"

// builtInReflectedAnnotations are the prefixed annotation keys (or
// <prefix>/* patterns) every consumer's reflected object may carry: those
// that ordinary tooling leaves on objects and nothing on the provider acts
// upon, and those of the reflection itself.
var builtInReflectedAnnotations = []string{
	// Helm's record of the release an object belongs to: read by Helm
	// only, when it manages that very object.
	"meta.helm.sh/release-name", "meta.helm.sh/release-namespace",
	"kubernetes.io/description", // text for people
	// A provider's Prometheus scraping a Service so annotated reaches the
	// consumer's pods behind it, nothing of the provider's.
	"prometheus.io/*",
	// Users' marks steering the reflection of the object that carries
	// them, copied along; the token Secrets' records of the pods' tokens.
	forge.SkipReflectionAnnotation, forge.AllowReflectionAnnotation, forge.ForceRemoteNodePortAnnotation,
	forge.TokenServiceAccountAnnotation, forge.TokenAudienceAnnotation, forge.TokenIssuedAnnotation, forge.TokenExpiryAnnotation,
}

// kindMetadata are the prefixed keys inert on one kind of reflected object
// only, besides the built-in ones.
type kindMetadata struct{ annotations, labels []string }

// reflectedKindMetadata are, by resource, the keys inert on that kind:
//   - Ingresses: the legacy class annotation, whose value vetIngressClass
//     judges;
//   - Secrets: the reflection's mark of the pods' tokens; cert-manager's
//     record of the certificate the consumer's cert-manager issued (the
//     provider's acts on a Secret only for a Certificate of the
//     provider's naming it, which a consumer cannot make in its twins);
//   - ShadowEndpointSlices: the Service a slice belongs to (one of the same
//     twin namespace: a slice never feeds a Service of another namespace)
//     and the headless mark the consumer's EndpointSlice controller puts.
//
// endpointslice.kubernetes.io/managed-by is refused (the provider sets its
// own on the slice it makes), and so is every other liqo key.
var reflectedKindMetadata = map[schema.GroupResource]kindMetadata{
	tenancy.IngressesResource: {annotations: []string{ingressClassAnnotation}},
	tenancy.SecretsResource: {
		annotations: []string{"cert-manager.io/certificate-name", "cert-manager.io/issuer-name", "cert-manager.io/issuer-kind",
			"cert-manager.io/issuer-group", "cert-manager.io/common-name", "cert-manager.io/alt-names", "cert-manager.io/ip-sans",
			"cert-manager.io/uri-sans"},
		labels: []string{forge.TokenLabel, "controller.cert-manager.io/fao"},
	},
	tenancy.ShadowEndpointSlicesResource: {labels: []string{discoveryv1.LabelServiceName, corev1.IsHeadlessService}},
}

// VetMetadata lists what the labels and annotations of a consumer's
// reflected object (of resource gr) may not ask of the provider, each
// refusal naming its rule (exported for the fuzz targets; the webhook
// calls it on every object it judges). Its
// controllers, meshes, DNS and certificate issuers act on domain-prefixed
// keys, and some select objects by labels across namespaces, so both are
// allow-lists (podpolicy.RefusedKeys): unprefixed and dotless-prefix keys, the built-in
// inert ones, and those the provider allows. Every object must carry the
// consumer's origin label, as the reflection's do: the budget.ObjectBudget
// counts a consumer's objects by it, and an object marked as liqo's
// (app.kubernetes.io/managed-by=liqo) without it would pass for one of the
// provider's own.
func (p *ReflectedPolicy) VetMetadata(consumer string, gr schema.GroupResource, obj metav1.Object) []string {
	kind := reflectedKindMetadata[gr]
	var bad []string
	refused, accepted := podpolicy.RefusedKeys(append(slices.Clone(builtInReflectedAnnotations), kind.annotations...), p.Annotations,
		obj.GetAnnotations(), field.NewPath("metadata", "annotations"))
	if len(refused) > 0 {
		bad = append(bad, fmt.Sprintf("%s %s not allowed: a domain-prefixed annotation is one a system of the provider may act upon "+
			"(ingress controllers, certificate issuers, DNS, meshes, Kubernetes, liqo); allowed are unprefixed keys, keys with a dotless "+
			"prefix (checksum/config) and %s [rule: %s]", strings.Join(refused, ", "), podpolicy.IsAre(refused), accepted, reflectedAnnotationRule))
	}
	refused, accepted = podpolicy.RefusedKeys(append(slices.Clone(podpolicy.BuiltInLabels), kind.labels...), p.Labels,
		obj.GetLabels(), field.NewPath("metadata", "labels"))
	if len(refused) > 0 {
		bad = append(bad, fmt.Sprintf("%s %s not allowed: a domain-prefixed label is one a system of the provider may select the object by "+
			"(Kubernetes, meshes, liqo); allowed are unprefixed keys, keys with a dotless prefix and %s [rule: %s]",
			strings.Join(refused, ", "), podpolicy.IsAre(refused), accepted, reflectedLabelRule))
	}
	origin, marked := obj.GetLabels()[consts.OriginClusterIDLabel]
	switch path := field.NewPath("metadata", "labels"); {
	case marked && origin != consumer:
		bad = append(bad, fmt.Sprintf("%s %q must be %q, the consumer writing it [rule: %s]", path.Key(consts.OriginClusterIDLabel), origin, consumer, originRule))
	case !marked:
		bad = append(bad, fmt.Sprintf("%s must be %q, the consumer writing it: the provider counts each consumer's objects by it "+
			"(and its own objects carry %s=%s alone) [rule: %s]",
			path.Key(consts.OriginClusterIDLabel), consumer, consts.ManagedByLabel, consts.ManagedByValue, originRule))
	}
	return bad
}
