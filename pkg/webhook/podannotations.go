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
// acts upon, and the AppArmor and seccomp ones, whose values the Pod
// Security check vets.
var builtInAnnotations = []string{
	"kubectl.kubernetes.io/restartedAt",            // kubectl rollout restart
	"kubectl.kubernetes.io/default-container",      // read by kubectl only
	"kubectl.kubernetes.io/default-logs-container", // read by kubectl only
	"kubernetes.io/limit-ranger",                   // written by the consumer's LimitRanger, informative
	podsecurity.AppArmorAnnotationPrefix + "*",
	podsecurity.SeccompPodAnnotation,
	podsecurity.SeccompContainerAnnotationPrefix + "*",
	forge.LocalUIDAnnotation, // the reflection's own record of the local pod
}

// vetAnnotations refuses the annotations other systems on the provider act
// upon. The rule is an allow-list, because a list of such systems could
// never be complete: a key is admitted if
//
//   - it has no prefix ("team"), or a prefix without a dot
//     ("checksum/config", as Helm charts write): by convention private to
//     the workload and its own tooling;
//   - it is one of builtInAnnotations;
//   - it matches PodPolicy.Annotations (exact, or <prefix>/*).
//
// Every other key has a domain prefix, the mark of a system that acts on
// it, and is refused: CNI plugins (k8s.v1.cni.cncf.io/networks attaching
// the pod to the provider's networks, v1.multus-cni.io/*,
// cni.projectcalico.org/ipAddrs choosing its address), service meshes
// (sidecar.istio.io/*, linkerd.io/*), cloud identity agents
// (iam.amazonaws.com/role), monitoring (prometheus.io/*, unless allowed),
// Kubernetes' own controllers (*.kubernetes.io/*, e.g.
// cluster-autoscaler.kubernetes.io/safe-to-evict blocking the provider's
// scale-down) and liqo's (*.liqo.io/*).
func (p *PodPolicy) vetAnnotations(annotations map[string]string) []string {
	path := field.NewPath("metadata", "annotations")
	var refused []string
	for _, k := range sets.List(sets.KeySet(annotations)) {
		if !p.annotationAllowed(k) {
			refused = append(refused, path.Key(k).String())
		}
	}
	if len(refused) == 0 {
		return nil
	}
	verb := "is"
	if len(refused) > 1 {
		verb = "are"
	}
	return []string{fmt.Sprintf("%s %s not allowed: a domain-prefixed annotation is one another system on the provider may act upon "+
		"(CNI, service mesh, Kubernetes); allowed are unprefixed keys, keys with a dotless prefix (checksum/config) and %s",
		strings.Join(refused, ", "), verb, strings.Join(append(slices.Clone(builtInAnnotations), p.Annotations...), ", "))}
}

// annotationAllowed applies vetAnnotations' rule to one key.
func (p *PodPolicy) annotationAllowed(key string) bool {
	prefix, _, found := strings.Cut(key, "/")
	if !found || !strings.Contains(prefix, ".") {
		return true
	}
	return matchesAnnotation(builtInAnnotations, key, prefix) || matchesAnnotation(p.Annotations, key, prefix)
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
