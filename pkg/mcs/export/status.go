package export

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/liqo-go/liqo/pkg/kit"
	"github.com/liqo-go/liqo/pkg/mcs/merge"
)

// outcome is what a reconcile found: the export's validity and, for a
// valid one, the merge of the clusterset's exports of its Service.
type outcome struct {
	valid  kit.Condition
	merged *merge.Result
}

// evaluate judges the export se of svc (nil: no such Service) by cluster,
// with the exports of the other clusters.
func evaluate(cluster string, se *mcsv1beta1.ServiceExport, svc *corev1.Service, peers []merge.Export) outcome {
	valid := kit.Condition{Type: string(mcsv1beta1.ServiceExportConditionValid)}
	if svc == nil {
		valid.Reason = string(mcsv1beta1.ServiceExportReasonNoService)
		valid.Message = fmt.Sprintf("no Service %s in namespace %s to export: create it, or delete this ServiceExport", se.Name, se.Namespace)
		return outcome{valid: valid}
	}
	if why := merge.Exportable(svc); why != "" {
		valid.Reason = string(mcsv1beta1.ServiceExportReasonInvalidServiceType)
		valid.Message = why
		return outcome{valid: valid}
	}
	valid.OK, valid.Reason = true, string(mcsv1beta1.ServiceExportReasonValid)
	valid.Message = fmt.Sprintf("Service %s can be exported", svc.Name)
	merged := merge.Merge(append([]merge.Export{merge.FromService(cluster, se, svc)}, peers...))
	return outcome{valid: valid, merged: &merged}
}

// updateStatus sets every condition of se from o, in one place. An invalid
// export takes no part in the clusterset, so it has no Conflict condition.
// It returns the Events the changes call for.
func updateStatus(se *mcsv1beta1.ServiceExport, o outcome) []userEvent {
	gen := se.Generation
	conds := &se.Status.Conditions
	var events []userEvent
	// The reasons before, copied: SetCondition updates a condition in place.
	wasValid := reasonOf(*conds, o.valid.Type)
	if kit.SetCondition(conds, gen, o.valid) && wasValid != o.valid.Reason {
		typ := corev1.EventTypeNormal
		if !o.valid.OK {
			typ = corev1.EventTypeWarning
		}
		events = append(events, userEvent{typ, o.valid.Reason, o.valid.Message})
	}
	conflictType := string(mcsv1beta1.ServiceExportConditionConflict)
	if o.merged == nil {
		meta.RemoveStatusCondition(conds, conflictType)
		return events
	}
	was := reasonOf(*conds, conflictType)
	c := kit.Condition{Type: conflictType, OK: len(o.merged.Conflicts) > 0, Reason: o.merged.Reason(), Message: o.merged.Message}
	if kit.SetCondition(conds, gen, c) && c.OK && was != c.Reason {
		events = append(events, userEvent{corev1.EventTypeWarning, "ExportConflict", c.Reason + ": " + c.Message})
	}
	return events
}

// reasonOf is the reason of condition typ in conds, "" without one.
func reasonOf(conds []metav1.Condition, typ string) string {
	if c := meta.FindStatusCondition(conds, typ); c != nil {
		return c.Reason
	}
	return ""
}

// userEvent is an Event to record on the ServiceExport.
type userEvent struct{ typ, reason, message string }
