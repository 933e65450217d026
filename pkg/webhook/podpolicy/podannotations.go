package podpolicy

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/podsecurity"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
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

// BuiltInLabels are the prefixed label keys (or <prefix>/* patterns) every
// consumer's pod and reflected object may carry: the recommended
// application labels and Helm's, which tools read and no controller acts
// upon; the reflection's mark of origin (whose value the webhooks check is
// the consumer's); and those the consumer's own workload controllers put
// on the pods they make, which on the provider could only select within
// the twin namespace, where none of the provider's StatefulSets or Jobs
// run.
var BuiltInLabels = []string{
	"app.kubernetes.io/*",
	"helm.sh/chart",
	consts.OriginClusterIDLabel,
	appsv1.StatefulSetPodNameLabel,
	appsv1.PodIndexLabel,
	batchv1.JobNameLabel,
	batchv1.ControllerUidLabel,
	batchv1.JobCompletionIndexAnnotation, // a label too
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
	// Labels Istio's injector puts on the consumer's pods: the provider's
	// mesh would send mutual TLS to a pod that has no sidecar here.
	"security.istio.io/*", "service.istio.io/*", "topology.istio.io/*",
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
	rule := keyRule{builtIn: builtInAnnotations, allowed: p.Annotations, metadataOnly: p.metadataOnly()}
	bad := rule.refused(annotations, field.NewPath("metadata", "annotations"))
	if len(bad) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%s %s not allowed: a domain-prefixed annotation is one another system on the provider may act upon "+
		"(CNI, Kubernetes, liqo); allowed are unprefixed keys, keys with a dotless prefix (checksum/config) and %s; "+
		"kept on the ShadowPod but not on its pod: %s",
		strings.Join(bad, ", "), IsAre(bad), rule.accepted(), OrNone(p.metadataOnly()))}
}

// vetLabels refuses the labels of a consumer's ShadowPod that systems of
// the provider select pods by (keyRule, with BuiltInLabels), but those kept
// off the real pod (the metadata-only keys: sidecar.istio.io/inject is a
// label as much as an annotation).
func (p *PodPolicy) vetLabels(labels map[string]string) []string {
	rule := keyRule{builtIn: BuiltInLabels, allowed: p.Labels, metadataOnly: p.metadataOnly()}
	bad := rule.refused(labels, field.NewPath("metadata", "labels"))
	if len(bad) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%s %s not allowed: a domain-prefixed label is one another system on the provider may select the pod by "+
		"(Kubernetes, meshes, liqo); allowed are unprefixed keys, keys with a dotless prefix and %s; kept on the ShadowPod but not on its pod: %s",
		strings.Join(bad, ", "), IsAre(bad), rule.accepted(), OrNone(p.metadataOnly()))}
}

// isAre is the verb for a list of len(items).
func IsAre(items []string) string {
	if len(items) > 1 {
		return "are"
	}
	return "is"
}

// annotationFate applies vetAnnotations' rule to one key.
func (p *PodPolicy) annotationFate(key string) annotationFate {
	return keyRule{builtIn: builtInAnnotations, allowed: p.Annotations, metadataOnly: p.metadataOnly()}.fate(key)
}

// keyRule is the allow-list every metadata key a consumer sends the
// provider (its pods' annotations and labels, its reflected objects') is
// judged by, since no list of the systems that act on such keys could be
// complete: a key without a prefix, or whose prefix has no dot
// (checksum/config), is the workload's own by convention; a key with a
// domain prefix is the mark of some system that acts on it, and passes only
// if it is known to be inert (builtIn) or the provider's administrator
// allows it (allowed). Exact keys, or <prefix>/* patterns.
type keyRule struct {
	builtIn, allowed []string
	// metadataOnly keys are kept on a ShadowPod but off its pod (none
	// for reflected objects, which the provider keeps as they come).
	metadataOnly []string
}

// fate is what becomes of key.
func (r keyRule) fate(key string) annotationFate {
	prefix, _, found := strings.Cut(key, "/")
	switch {
	case !found || !strings.Contains(prefix, "."),
		MatchesAnnotation(r.builtIn, key, prefix), MatchesAnnotation(r.allowed, key, prefix):
		return carried
	case MatchesAnnotation(r.metadataOnly, key, prefix):
		return metadataOnly
	}
	return refused
}

// refused lists, sorted, the keys of m the rule refuses, as paths under
// path (metadata.labels[key]).
func (r keyRule) refused(m map[string]string, path *field.Path) []string {
	var bad []string
	for _, k := range sets.List(sets.KeySet(m)) {
		if r.fate(k) == refused {
			bad = append(bad, path.Key(k).String())
		}
	}
	return bad
}

// RefusedKeys lists, sorted, the keys of m (as paths under path) that
// are refused by the allow-list of keys and patterns builtIn and allowed,
// and what the list accepts, for a refusal to tell the consumer what it
// may send: the rule of a pod's annotations and labels, for the other
// objects consumers write.
func RefusedKeys(builtIn, allowed []string, m map[string]string, path *field.Path) (refused []string, accepted string) {
	r := keyRule{builtIn: builtIn, allowed: allowed}
	return r.refused(m, path), r.accepted()
}

// accepted lists the keys and patterns the rule lets through, for a
// refusal to tell the consumer what it may send.
func (r keyRule) accepted() string {
	return strings.Join(append(slices.Clone(r.builtIn), r.allowed...), ", ")
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
func OrNone(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, ", ")
}

// MatchesAnnotation tells whether key (of the given prefix) is one of
// patterns, or under one of their <prefix>/*.
func MatchesAnnotation(patterns []string, key, prefix string) bool {
	for _, pt := range patterns {
		if pt == key || pt == prefix+"/*" {
			return true
		}
	}
	return false
}
