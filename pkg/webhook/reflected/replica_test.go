package reflected

import (
	"context"
	"encoding/json"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/liqo-go/liqo/apis"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/webhook/budget"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
	"github.com/liqo-go/liqo/pkg/webhook/tenancy"
)

// TestReplicaWrites sends the replicas' webhook the writes a consumer makes
// in its tenant namespace on a provider peered with it both ways: its own
// replicas pass, the provider's own NamespaceMap and ResourceSlices toward
// it (no replication label) are refused whatever the verb, and so is
// turning one into the other; so are its ExportRecords that name another
// source cluster, and any write to the provider's own records. The acceptance test on two clusters is
// test/peering's TestReversePeeringObjects.
func TestReplicaWrites(t *testing.T) {
	rome := authnv1.UserInfo{Username: consts.ConsumerUser("rome"), Groups: []string{consts.ConsumerGroup}}
	admin := authnv1.UserInfo{Username: "kubernetes-admin", Groups: []string{"system:masters"}}
	tenant := consts.TenantNamespace("rome")
	replica := map[string]string{consts.ReplicationLabel: "true", consts.OriginClusterIDLabel: "rome"}
	handMade := map[string]string{consts.ReplicationLabel: "true"}
	// milan's own map toward rome, in the same namespace.
	own := map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.RemoteClusterIDLabel: "rome"}
	spoofed := map[string]string{consts.ReplicationLabel: "true", consts.OriginClusterIDLabel: "naples"}
	// rome's ExportRecord, and milan's own record toward rome beside it.
	myRecord := map[string]string{mcsv1beta1.LabelSourceCluster: "rome"}
	milanRecord := map[string]string{mcsv1beta1.LabelSourceCluster: "milan"}

	cases := []struct {
		name          string
		user          authnv1.UserInfo
		op            admissionv1.Operation
		resource      string
		namespace     string
		before, after map[string]string // labels; nil: no such object
		refusal       string            // "" if admitted
	}{
		{"its replica created", rome, admissionv1.Create, "namespacemaps", tenant, nil, replica, ""},
		{"its replica updated", rome, admissionv1.Update, "namespacemaps", tenant, replica, replica, ""},
		{"its replica deleted", rome, admissionv1.Delete, "resourceslices", tenant, replica, nil, ""},
		{"a hand-made replica without origin", rome, admissionv1.Create, "namespacemaps", tenant, nil, handMade, ""},
		{"the provider's own map changed", rome, admissionv1.Update, "namespacemaps", tenant, own, own,
			"may not change or delete namespacemaps " + tenant + "/x: it is not one of its replicas"},
		{"the provider's own map labelled as a replica", rome, admissionv1.Update, "namespacemaps", tenant, own, replica,
			"it is not one of its replicas"},
		{"the provider's own slice deleted", rome, admissionv1.Delete, "resourceslices", tenant, own, nil,
			"may not change or delete resourceslices"},
		{"a map planted without the replication label", rome, admissionv1.Create, "namespacemaps", tenant, nil, own,
			"must keep the labels " + consts.ReplicationLabel + "=true"},
		{"a replica turned into a local map", rome, admissionv1.Update, "namespacemaps", tenant, replica, own,
			"must keep the labels"},
		{"a replica claiming another origin", rome, admissionv1.Create, "resourceslices", tenant, nil, spoofed,
			consts.OriginClusterIDLabel + "=rome"},
		{"outside its tenant namespace", rome, admissionv1.Create, "namespacemaps", consts.TenantNamespace("naples"), nil, replica,
			"only in its tenant namespace " + tenant},
		{"a half consumer identity", authnv1.UserInfo{Username: consts.ConsumerUser("rome")}, admissionv1.Create, "namespacemaps", tenant, nil, replica,
			"is not in group " + consts.ConsumerGroup},
		{"its export record created", rome, admissionv1.Create, "exportrecords", tenant, nil, myRecord, ""},
		{"its export record deleted", rome, admissionv1.Delete, "exportrecords", tenant, myRecord, nil, ""},
		{"a record claiming the provider's exports", rome, admissionv1.Create, "exportrecords", tenant, nil, milanRecord,
			"must keep the label " + mcsv1beta1.LabelSourceCluster + "=rome"},
		{"a record with no source", rome, admissionv1.Create, "exportrecords", tenant, nil, map[string]string{}, "must keep the label"},
		{"the provider's own record changed", rome, admissionv1.Update, "exportrecords", tenant, milanRecord, milanRecord,
			"may not change or delete exportrecords " + tenant + "/x: it is not one of its records"},
		{"the provider's own record taken over", rome, admissionv1.Update, "exportrecords", tenant, milanRecord, myRecord,
			"it is not one of its records"},
		{"the provider's own record deleted", rome, admissionv1.Delete, "exportrecords", tenant, milanRecord, nil,
			"it is not one of its records"},
		{"a record outside its tenant namespace", rome, admissionv1.Create, "exportrecords", consts.TenantNamespace("naples"), nil, myRecord,
			"only in its tenant namespace " + tenant},
		{"an administrator is not judged", admin, admissionv1.Update, "namespacemaps", tenant, own, own, ""},
	}
	v := NewReplicaValidator(admission.NewDecoder(apis.NewScheme()), budget.New(budget.DefaultObjectBudget()))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := v.Handle(context.Background(), replicaReview(t, c.user, c.op, c.resource, c.namespace, c.before, c.after))
			if c.refusal == "" {
				if !resp.Allowed {
					t.Errorf("refused: %+v", resp.Result)
				}
				return
			}
			webhooktest.WantRefused(t, c.name, resp, c.refusal)
		})
	}
}

// replicaReview is the admission request of op on the object x of
// resource in namespace, labelled before and after (nil: absent).
func replicaReview(t *testing.T, user authnv1.UserInfo, op admissionv1.Operation, resource, namespace string, before, after map[string]string) admission.Request {
	t.Helper()
	raw := func(labels map[string]string) runtime.RawExtension {
		if labels == nil {
			return runtime.RawExtension{}
		}
		b, err := json.Marshal(metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: namespace, Labels: labels}})
		if err != nil {
			t.Fatal(err)
		}
		return runtime.RawExtension{Raw: b}
	}
	gr := tenancy.NamespaceMapsResource
	for _, r := range []schema.GroupResource{tenancy.ResourceSlicesResource, tenancy.ExportRecordsResource} {
		if resource == r.Resource {
			gr = r
		}
	}
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{UID: "test",
		Resource: metav1.GroupVersionResource{Group: gr.Group, Version: "v1beta1", Resource: gr.Resource},
		Name:     "x", Namespace: namespace, Operation: op, UserInfo: user, Object: raw(after), OldObject: raw(before)}}
}
