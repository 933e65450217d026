package webhook

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/liqo-go/liqo/pkg/podsecurity"
	"github.com/liqo-go/liqo/pkg/reflection/forge"
)

// builtInAnnotations are the prefixed annotation keys (or <prefix>/*
// patterns) every consumer's pod may carry: those the consumer's own API
// server and tooling put on ordinary pods and that nothing on the provider
// acts upon, the AppArmor and seccomp ones, whose values the Pod Security
// check vets, and Prometheus' scrape settings.
var builtInAnnotations = []string{
	"kubectl.kubernetes.io/restartedAt",            // kubectl rollout restart
	"kubectl.kubernetes.io/default-container",      // read by kubectl only
	"kubectl.kubernetes.io/default-logs-container", // read by kubectl only
	"kubernetes.io/limit-ranger",                   // written by the consumer's LimitRanger, informative
	podsecurity.AppArmorAnnotationPrefix + "*",
	podsecurity.SeccompPodAnnotation,
	podsecurity.SeccompContainerAnnotationPrefix + "*",
	forge.LocalUIDAnnotation, // the reflection's own record of the local pod
	// A provider's Prometheus acting on them scrapes the pod's own port
	// and path: it reaches the consumer's pod, nothing of the provider's.
	"prometheus.io/*",
}

// DefaultMetadataOnlyAnnotations are the annotations a consumer's pod
// brings from its own cluster's mesh and identity systems, which the same
// systems on the provider would act upon: sidecar injectors would add a
// proxy (or a Vault agent) configured and authenticated as the provider's,
// and identity agents would hand the pod the provider's cloud role of that
// name. The ShadowPod keeps them, the real pod does not: the workload runs
// as it would in a cluster without those systems.
var DefaultMetadataOnlyAnnotations = []string{
	"sidecar.istio.io/*", "proxy.istio.io/*", "traffic.sidecar.istio.io/*", "status.sidecar.istio.io/*",
	"readiness.status.sidecar.istio.io/*", "prometheus.istio.io/*", "istio.io/*",
	"linkerd.io/*", "config.linkerd.io/*", "config.alpha.linkerd.io/*", "viz.linkerd.io/*",
	"iam.amazonaws.com/*", "eks.amazonaws.com/*", "azure.workload.identity/*",
	"vault.hashicorp.com/*",
}

// annotationFate is what becomes of one annotation of a consumer's pod.
type annotationFate int

const (
	// carried: the real pod carries it.
	carried annotationFate = iota
	// metadataOnly: the ShadowPod carries it, the real pod does not.
	metadataOnly
	// refused: the ShadowPod is refused.
	refused
)

// vetAnnotations refuses the annotations other systems on the provider act
// upon, unless the real pod goes without them. The rule is an allow-list,
// because a list of such systems could never be complete: a key is
// carried to the real pod if
//
//   - it has no prefix ("team"), or a prefix without a dot
//     ("checksum/config", as Helm charts write): by convention private to
//     the workload and its own tooling;
//   - it is one of builtInAnnotations;
//   - it matches PodPolicy.Annotations (exact, or <prefix>/*);
//
// it is kept on the ShadowPod only if it matches the metadata-only list
// (PodPolicy.MetadataOnlyAnnotations: meshes, cloud identity); and every
// other key, which has a domain prefix, the mark of a system that acts on
// it, is refused: CNI plugins (k8s.v1.cni.cncf.io/networks attaching the
// pod to the provider's networks, v1.multus-cni.io/*,
// cni.projectcalico.org/ipAddrs choosing its address, which the pod
// could not do without), Kubernetes' own controllers (*.kubernetes.io/*,
// e.g. cluster-autoscaler.kubernetes.io/safe-to-evict blocking the
// provider's scale-down) and liqo's (*.liqo.io/*).
func (p *PodPolicy) vetAnnotations(annotations map[string]string) []string {
	path := field.NewPath("metadata", "annotations")
	var bad []string
	for _, k := range sets.List(sets.KeySet(annotations)) {
		if p.annotationFate(k) == refused {
			bad = append(bad, path.Key(k).String())
		}
	}
	if len(bad) == 0 {
		return nil
	}
	verb := "is"
	if len(bad) > 1 {
		verb = "are"
	}
	return []string{fmt.Sprintf("%s %s not allowed: a domain-prefixed annotation is one another system on the provider may act upon "+
		"(CNI, Kubernetes, liqo); allowed are unprefixed keys, keys with a dotless prefix (checksum/config) and %s; "+
		"kept on the ShadowPod but not on its pod: %s",
		strings.Join(bad, ", "), verb, strings.Join(append(slices.Clone(builtInAnnotations), p.Annotations...), ", "),
		orNone(p.metadataOnly()))}
}

// annotationFate applies vetAnnotations' rule to one key.
func (p *PodPolicy) annotationFate(key string) annotationFate {
	prefix, _, found := strings.Cut(key, "/")
	switch {
	case !found || !strings.Contains(prefix, "."),
		matchesAnnotation(builtInAnnotations, key, prefix), matchesAnnotation(p.Annotations, key, prefix):
		return carried
	case matchesAnnotation(p.metadataOnly(), key, prefix):
		return metadataOnly
	}
	return refused
}

// MetadataOnly tells whether the pod of a consumer's ShadowPod goes
// without the annotation (or label) key, which the ShadowPod may carry
// (see vetAnnotations): the ShadowPod controller drops such keys.
func (p *PodPolicy) MetadataOnly(key string) bool { return p.annotationFate(key) == metadataOnly }

// metadataOnly is MetadataOnlyAnnotations or its default.
func (p *PodPolicy) metadataOnly() []string {
	if p.MetadataOnlyAnnotations == nil {
		return DefaultMetadataOnlyAnnotations
	}
	return p.MetadataOnlyAnnotations
}

// orNone lists items, or says there are none.
func orNone(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, ", ")
}

// matchesAnnotation tells whether key (of the given prefix) is one of
// patterns, or under one of their <prefix>/*.
func matchesAnnotation(patterns []string, key, prefix string) bool {
	for _, pt := range patterns {
		if pt == key || pt == prefix+"/*" {
			return true
		}
	}
	return false
}
