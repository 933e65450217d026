package info

import (
	"cmp"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

// Services are the cluster's Multi-Cluster Services: the Services it
// exports to the clusterset and those it imports.
type Services struct {
	Exports []ExportInfo `json:"exports"`
	Imports []ImportInfo `json:"imports"`
}

// ExportInfo is one ServiceExport and what the clusterset made of it.
type ExportInfo struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Status is Exported, Invalid (the Valid condition's reason says why),
	// Conflict (the export is in, with the winning cluster's properties)
	// or Pending.
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// ImportInfo is one ServiceImport: the Service as the clusterset offers
// it here, and the clusters that back it.
type ImportInfo struct {
	Namespace string   `json:"namespace"`
	Name      string   `json:"name"`
	Type      string   `json:"type"`
	IPs       []string `json:"ips,omitempty"`
	Ports     []string `json:"ports,omitempty"`
	Clusters  []string `json:"clusters,omitempty"`
}

// The summaries of an export's state.
const (
	ExportExported = "Exported"
	ExportInvalid  = "Invalid"
	ExportConflict = "Conflict"
)

// buildServices summarizes the ServiceExports and ServiceImports, sorted
// by namespace and name. Pure.
func buildServices(exports []mcsv1beta1.ServiceExport, imports []mcsv1beta1.ServiceImport) Services {
	out := Services{Exports: []ExportInfo{}, Imports: []ImportInfo{}}
	for i := range exports {
		out.Exports = append(out.Exports, exportInfo(&exports[i]))
	}
	for i := range imports {
		si := &imports[i]
		in := ImportInfo{Namespace: si.Namespace, Name: si.Name, Type: string(si.Spec.Type), IPs: si.Spec.IPs}
		for _, p := range si.Spec.Ports {
			in.Ports = append(in.Ports, portString(p.Port, string(p.Protocol)))
		}
		for _, c := range si.Status.Clusters {
			in.Clusters = append(in.Clusters, c.Cluster)
		}
		slices.Sort(in.Clusters)
		out.Imports = append(out.Imports, in)
	}
	slices.SortFunc(out.Exports, func(a, b ExportInfo) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	slices.SortFunc(out.Imports, func(a, b ImportInfo) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// exportInfo reads an export's state from its conditions: invalid first
// (it takes no part), then a conflict (it takes part, overruled), then
// ready.
func exportInfo(se *mcsv1beta1.ServiceExport) ExportInfo {
	e := ExportInfo{Namespace: se.Namespace, Name: se.Name, Status: statusPending}
	cond := func(t mcsv1beta1.ServiceExportConditionType) *metav1.Condition {
		return meta.FindStatusCondition(se.Status.Conditions, string(t))
	}
	switch valid, conflict, ready := cond(mcsv1beta1.ServiceExportConditionValid), cond(mcsv1beta1.ServiceExportConditionConflict),
		cond(mcsv1beta1.ServiceExportConditionReady); {
	case valid != nil && valid.Status == metav1.ConditionFalse:
		e.Status, e.Reason, e.Message = ExportInvalid, valid.Reason, valid.Message
	case conflict != nil && conflict.Status == metav1.ConditionTrue:
		e.Status, e.Reason, e.Message = ExportConflict, conflict.Reason, conflict.Message
	case ready != nil && ready.Status == metav1.ConditionTrue, ready == nil && valid != nil && valid.Status == metav1.ConditionTrue:
		e.Status = ExportExported
	case ready != nil:
		e.Reason, e.Message = ready.Reason, ready.Message
	}
	return e
}

func portString(port int32, protocol string) string {
	if protocol == "" {
		protocol = "TCP"
	}
	return fmt.Sprintf("%d/%s", port, protocol)
}
