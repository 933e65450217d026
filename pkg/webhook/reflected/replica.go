package reflected

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/webhook/budget"
	"github.com/liqo-go/liqo/pkg/webhook/tenancy"
)

// replicaValidator keeps a consumer to its own replicas in its tenant
// namespace on a provider.
//
// In a peering both ways the tenant namespace liqo-tenant-<consumer> holds
// two directions' objects of the same kinds: the consumer's replicas (its
// NamespaceMap and ResourceSlices toward this cluster) and this cluster's
// own NamespaceMap and ResourceSlices toward the consumer, which drive this
// cluster's offloading there. RBAC grants the consumer the kinds in the
// namespace and cannot tell the two apart: resourceNames cannot limit
// create, and ResourceSlices have any name. Editing this cluster's map made
// it replicate namespaces of the consumer's choice, with their Secrets,
// into the consumer's cluster (issue 30). The layout stays the reference's
// (both directions in the one tenant namespace, which peers, liqoctl and
// users look in); what tells the objects apart is the replication label,
// which this cluster's own objects never carry and its controllers key on,
// so a consumer may write, change and delete only objects that carry it
// before and after the write.
//
// The consumer's ExportRecords (package mcs) share the namespace with this
// cluster's records toward it in the same way; their source-cluster label,
// which names the exporting cluster and which the receivers check, tells
// them apart: a consumer writes only records naming itself.
//
// Its replicas and records are then held to the consumer's
// budget.ObjectBudget.
type replicaValidator struct {
	decoder admission.Decoder
	budget  *budget.Guard
}

var _ admission.Handler = (*replicaValidator)(nil)

// NewReplicaValidator is the handler of the replicas consumers write,
// holding them to guard's budget.
func NewReplicaValidator(decoder admission.Decoder, guard *budget.Guard) admission.Handler {
	return &replicaValidator{decoder: decoder, budget: guard}
}

// Handle validates one create, update or delete of a NamespaceMap, a
// ResourceSlice or an ExportRecord by a consumer.
func (v *replicaValidator) Handle(ctx context.Context, req admission.Request) admission.Response {
	id, gr, answer := tenancy.ConsumerWrite(req, "replicas'", tenancy.NamespaceMapsResource, tenancy.ResourceSlicesResource,
		tenancy.ExportRecordsResource)
	if answer != nil {
		return *answer
	}
	var before, after *metav1.ObjectMeta
	var err error
	if req.Operation == admissionv1.Update || req.Operation == admissionv1.Delete {
		if before, err = objectMeta(req.OldObject.Raw); err != nil {
			return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding the object before the %s: %w", req.Operation, err))
		}
	}
	if req.Operation == admissionv1.Create || req.Operation == admissionv1.Update {
		if after, err = objectMeta(req.Object.Raw); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
	}
	refusal := replicaRefusal
	if gr == tenancy.ExportRecordsResource {
		refusal = recordRefusal
	}
	if why := refusal(id, gr.Resource, req.Namespace, before, after); why != "" {
		return admission.Denied(why)
	}
	if after == nil {
		return admission.Allowed("")
	}
	obj, _ := budget.NewObject(gr)
	var old client.Object
	if err := v.decoder.Decode(req, obj); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if before != nil {
		old, _ = budget.NewObject(gr)
		if err := v.decoder.DecodeRaw(req.OldObject, old); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
	}
	return v.budget.Respond(ctx, req, id, gr, obj, old)
}

// objectMeta decodes the metadata of an object, whatever its kind.
func objectMeta(raw []byte) (*metav1.ObjectMeta, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("the admission request carries no object")
	}
	var o metav1.PartialObjectMetadata
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, err
	}
	return &o.ObjectMeta, nil
}

// replicaRefusal says why consumer may not write an object of resource in
// namespace, given its metadata before the write (nil on create) and after
// it (nil on delete), or "" if it may.
//
// The origin label is not required, only checked when set: the provider's
// controllers act on the replication label alone, and a replica without
// origin is one the consumer's replicator leaves alone (tests and
// administrators write such maps by hand).
func replicaRefusal(consumer, resource, namespace string, before, after *metav1.ObjectMeta) string {
	if why := outsideTenant(consumer, resource, namespace); why != "" {
		return why
	}
	replica := func(m *metav1.ObjectMeta) bool {
		origin, marked := m.Labels[consts.OriginClusterIDLabel]
		return m.Labels[consts.ReplicationLabel] == "true" && (!marked || origin == consumer)
	}
	marks := fmt.Sprintf("labels %s=true and, if any, %s=%s", consts.ReplicationLabel, consts.OriginClusterIDLabel, consumer)
	if before != nil && !replica(before) {
		return fmt.Sprintf("consumer %s may not change or delete %s %s/%s: it is not one of its replicas (%s) but this cluster's own, "+
			"which drives this cluster's peering toward %s", consumer, resource, namespace, before.Name, marks, consumer)
	}
	if after != nil && !replica(after) {
		return fmt.Sprintf("consumer %s may write only its replicas in %s: %s %s must keep the %s; "+
			"objects without them are this cluster's own, toward %s", consumer, namespace, resource, after.Name, marks, consumer)
	}
	return ""
}

// recordRefusal says why consumer may not write an ExportRecord in
// namespace, given its metadata before and after the write as
// replicaRefusal takes them, or "" if it may: only records whose
// source-cluster label names it, in its tenant namespace.
func recordRefusal(consumer, resource, namespace string, before, after *metav1.ObjectMeta) string {
	if why := outsideTenant(consumer, resource, namespace); why != "" {
		return why
	}
	mark := fmt.Sprintf("label %s=%s", mcsv1beta1.LabelSourceCluster, consumer)
	mine := func(m *metav1.ObjectMeta) bool { return m.Labels[mcsv1beta1.LabelSourceCluster] == consumer }
	if before != nil && !mine(before) {
		return fmt.Sprintf("consumer %s may not change or delete %s %s/%s: it is not one of its records (%s) but this cluster's own, "+
			"which publishes this cluster's exports to %s", consumer, resource, namespace, before.Name, mark, consumer)
	}
	if after != nil && !mine(after) {
		return fmt.Sprintf("consumer %s may write only its own records in %s: %s %s must keep the %s, as it publishes only its own exports",
			consumer, namespace, resource, after.Name, mark)
	}
	return ""
}

// outsideTenant says why consumer may not write resource in namespace when
// it is not its tenant namespace, the only one where it writes replicas
// and records, or "" if it is.
func outsideTenant(consumer, resource, namespace string) string {
	if own := consts.TenantNamespace(consumer); namespace != own {
		return fmt.Sprintf("consumer %s may write %s only in its tenant namespace %s, not in %q", consumer, resource, own, namespace)
	}
	return ""
}
