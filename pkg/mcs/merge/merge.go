package merge

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

// Result is what the clusterset makes of a Service's exports.
type Result struct {
	// Spec is the ServiceImport's spec, but its IPs (each importing cluster
	// allocates its own).
	Spec mcsv1beta1.ServiceImportSpec
	// Labels and Annotations are the ServiceImport's.
	Labels, Annotations map[string]string
	// Clusters are the exporting clusters, sorted.
	Clusters []string
	// Conflicts are the KEP's reasons of the Conflict condition, in the
	// KEP's order; none when the exports agree.
	Conflicts []mcsv1beta1.ServiceExportConditionReason
	// Message tells which clusters disagree with the oldest export, on what.
	Message string
}

// Reason is the Conflict condition's reason: the conflicts joined by
// commas, as the KEP combines them, or NoConflicts.
func (r Result) Reason() string {
	if len(r.Conflicts) == 0 {
		return string(mcsv1beta1.ServiceExportReasonNoConflicts)
	}
	reasons := make([]string, len(r.Conflicts))
	for i, c := range r.Conflicts {
		reasons[i] = string(c)
	}
	return strings.Join(reasons, ",")
}

// property is one property the exports must agree on: equal tells whether
// two exports agree.
type property struct {
	reason mcsv1beta1.ServiceExportConditionReason
	what   string
	equal  func(a, b Export) bool
}

// properties are compared in the KEP's order of the reasons.
var properties = []property{
	{mcsv1beta1.ServiceExportReasonPortConflict, "ports", func(a, b Export) bool { return samePorts(a.Ports, b.Ports) }},
	{mcsv1beta1.ServiceExportReasonTypeConflict, "type", func(a, b Export) bool { return a.Type == b.Type }},
	{mcsv1beta1.ServiceExportReasonSessionAffinityConflict, "session affinity", func(a, b Export) bool { return a.SessionAffinity == b.SessionAffinity }},
	{mcsv1beta1.ServiceExportReasonSessionAffinityConfigConflict, "session affinity config", func(a, b Export) bool {
		return equality.Semantic.DeepEqual(a.SessionAffinityConfig, b.SessionAffinityConfig)
	}},
	{mcsv1beta1.ServiceExportReasonAnnotationsConflict, "exported annotations", func(a, b Export) bool { return maps.Equal(a.Annotations, b.Annotations) }},
	{mcsv1beta1.ServiceExportReasonLabelsConflict, "exported labels", func(a, b Export) bool { return maps.Equal(a.Labels, b.Labels) }},
	{mcsv1beta1.ServiceExportReasonInternalTrafficPolicyConflict, "internal traffic policy", func(a, b Export) bool {
		// Unset is the API server's default, Cluster.
		return ptr.Deref(a.InternalTrafficPolicy, corev1.ServiceInternalTrafficPolicyCluster) == ptr.Deref(b.InternalTrafficPolicy, corev1.ServiceInternalTrafficPolicyCluster)
	}},
	{mcsv1beta1.ServiceExportReasonTrafficDistributionConflict, "traffic distribution", func(a, b Export) bool {
		return ptr.Deref(a.TrafficDistribution, "") == ptr.Deref(b.TrafficDistribution, "")
	}},
	{mcsv1beta1.ServiceExportReasonIPFamilyConflict, "IP families", func(a, b Export) bool { return slices.Equal(a.IPFamilies, b.IPFamilies) }},
}

// Merge merges the exports of one Service. It does not modify exports; with
// none it returns the zero Result.
func Merge(exports []Export) Result {
	if len(exports) == 0 {
		return Result{}
	}
	sorted := slices.Clone(exports)
	slices.SortFunc(sorted, func(a, b Export) int {
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.Cluster, b.Cluster))
	})
	oldest := sorted[0]
	r := Result{
		Spec: mcsv1beta1.ServiceImportSpec{
			Type:                  oldest.Type,
			Ports:                 unionPorts(sorted),
			SessionAffinity:       oldest.SessionAffinity,
			SessionAffinityConfig: oldest.SessionAffinityConfig.DeepCopy(),
			IPFamilies:            slices.Clone(oldest.IPFamilies),
			InternalTrafficPolicy: oldest.InternalTrafficPolicy,
			TrafficDistribution:   oldest.TrafficDistribution,
		},
		Labels:      maps.Clone(oldest.Labels),
		Annotations: maps.Clone(oldest.Annotations),
	}
	var disagreements []string
	for _, e := range sorted {
		r.Clusters = append(r.Clusters, e.Cluster)
		var differs []string
		for _, p := range properties {
			if p.equal(oldest, e) {
				continue
			}
			differs = append(differs, p.what)
			if !slices.Contains(r.Conflicts, p.reason) {
				r.Conflicts = append(r.Conflicts, p.reason)
			}
		}
		if len(differs) > 0 {
			disagreements = append(disagreements, fmt.Sprintf("%s on %s", e.Cluster, strings.Join(differs, ", ")))
		}
	}
	slices.Sort(r.Clusters)
	// Keep the KEP's order whatever the order the exports revealed them in.
	slices.SortFunc(r.Conflicts, func(a, b mcsv1beta1.ServiceExportConditionReason) int {
		return cmp.Compare(reasonRank(a), reasonRank(b))
	})
	if len(disagreements) > 0 {
		r.Message = fmt.Sprintf("the exports disagree with the oldest one, of cluster %s, which wins: %s", oldest.Cluster, strings.Join(disagreements, "; "))
	} else {
		r.Message = fmt.Sprintf("the exports of %d cluster(s) agree", len(sorted))
	}
	return r
}

func reasonRank(r mcsv1beta1.ServiceExportConditionReason) int {
	return slices.IndexFunc(properties, func(p property) bool { return p.reason == r })
}
