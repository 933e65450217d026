package export

import (
	"bytes"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/liqo-go/liqo/pkg/liqoctl/output"
)

// TestDecide: what export service does for each state of the Service and
// of its ServiceExport.
func TestDecide(t *testing.T) {
	svc := func(typ corev1.ServiceType) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "hello"}, Spec: corev1.ServiceSpec{Type: typ}}
	}
	exported := &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "hello"}}
	deleting := exported.DeepCopy()
	deleting.DeletionTimestamp = new(metav1.Now())
	cases := []struct {
		name     string
		svc      *corev1.Service
		existing *mcsv1beta1.ServiceExport
		want     action
		wantErr  []string
	}{
		{"ClusterIP, not exported", svc(corev1.ServiceTypeClusterIP), nil, create, nil},
		{"type unset, not exported", svc(""), nil, create, nil},
		{"NodePort", svc(corev1.ServiceTypeNodePort), nil, create, nil},
		{"LoadBalancer", svc(corev1.ServiceTypeLoadBalancer), nil, create, nil},
		{"already exported", svc(corev1.ServiceTypeClusterIP), exported, keep, nil},
		{"no Service", nil, nil, 0, []string{"no Service hello in namespace demo", "nothing was exported"}},
		{"no Service, stale export", nil, exported, 0, []string{"no Service hello", "liqoctl unexport service hello -n demo"}},
		{"ExternalName", svc(corev1.ServiceTypeExternalName), nil, 0, []string{"demo/hello is of type ExternalName, which cannot be exported"}},
		{"ExternalName, exported", svc(corev1.ServiceTypeExternalName), exported, 0, []string{"ExternalName", "liqoctl unexport service hello -n demo"}},
		{"export being deleted", svc(corev1.ServiceTypeClusterIP), deleting, 0, []string{"is being deleted"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := decide("demo", "hello", c.svc, c.existing)
			if c.wantErr == nil {
				if err != nil || got != c.want {
					t.Fatalf("got %v, %v; want %v", got, err, c.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("got %v, want an error", got)
			}
			for _, w := range c.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if c.existing == nil && strings.Contains(err.Error(), "unexport") {
				t.Errorf("error %q talks of an export that does not exist", err)
			}
		})
	}
}

// TestJudge: the wait ends on Valid=True of the export's generation, and
// reports a True Conflict with it.
func TestJudge(t *testing.T) {
	cond := func(typ mcsv1beta1.ServiceExportConditionType, status metav1.ConditionStatus, reason string, gen int64) metav1.Condition {
		return metav1.Condition{Type: string(typ), Status: status, Reason: reason, Message: "m", ObservedGeneration: gen}
	}
	valid := func(status metav1.ConditionStatus, reason string, gen int64) metav1.Condition {
		return cond(mcsv1beta1.ServiceExportConditionValid, status, reason, gen)
	}
	conflict := func(status metav1.ConditionStatus, gen int64) metav1.Condition {
		return cond(mcsv1beta1.ServiceExportConditionConflict, status, "PortConflict", gen)
	}
	cases := []struct {
		name         string
		conds        []metav1.Condition
		notYet       string
		wantConflict bool
	}{
		{"no conditions", nil, "no Valid condition yet", false},
		{"valid", []metav1.Condition{valid(metav1.ConditionTrue, "Valid", 2)}, "", false},
		{"valid, generation not recorded", []metav1.Condition{valid(metav1.ConditionTrue, "Valid", 0)}, "", false},
		{"valid of an older generation", []metav1.Condition{valid(metav1.ConditionTrue, "Valid", 1)}, "no Valid condition yet", false},
		{"invalid: waited on", []metav1.Condition{valid(metav1.ConditionFalse, "NoService", 2)}, "Valid=False (NoService): m", false},
		{"conflict", []metav1.Condition{valid(metav1.ConditionTrue, "Valid", 2), conflict(metav1.ConditionTrue, 2)}, "", true},
		{"no conflict", []metav1.Condition{valid(metav1.ConditionTrue, "Valid", 2), conflict(metav1.ConditionFalse, 2)}, "", false},
		{"stale conflict", []metav1.Condition{valid(metav1.ConditionTrue, "Valid", 2), conflict(metav1.ConditionTrue, 1)}, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			se := &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Status: mcsv1beta1.ServiceExportStatus{Conditions: c.conds}}
			v, err := judge(se)
			if c.notYet != "" {
				// pkg/wait's "not yet" kind (wait.NotYet): the wait goes on.
				if err == nil || !strings.HasPrefix(err.Error(), "not yet: ") || !strings.Contains(err.Error(), c.notYet) {
					t.Fatalf("got %v, want to keep waiting with %q", err, c.notYet)
				}
				return
			}
			if err != nil || v.Valid.Status != metav1.ConditionTrue {
				t.Fatalf("got %+v, %v; want Valid=True", v, err)
			}
			if (v.Conflict != nil) != c.wantConflict {
				t.Errorf("conflict %+v, want one: %v", v.Conflict, c.wantConflict)
			}
		})
	}
}

// TestNames: names the API server would refuse fail before any request.
func TestNames(t *testing.T) {
	for _, c := range []struct {
		ns, name, wantErr string
	}{
		{"demo", "hello", ""},
		{"demo", "Hello", "not a valid Service name"},
		{"demo", "1hello", "not a valid Service name"},
		{"Demo_", "hello", "not a valid namespace name"},
	} {
		err := checkNames(c.ns, c.name)
		if (c.wantErr == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%s/%s: got %v, want %q", c.ns, c.name, err, c.wantErr)
		}
	}
}

// TestPrintManifest: -o prints the ServiceExport, touching no cluster.
func TestPrintManifest(t *testing.T) {
	var out bytes.Buffer
	o := &Options{Name: "hello", Namespace: "demo", Print: output.NewObjectFlags(""), out: &output.Printer{W: &out}}
	if err := o.Print.Set("yaml"); err != nil {
		t.Fatal(err)
	}
	if err := o.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"apiVersion: multicluster.x-k8s.io/v1beta1", "kind: ServiceExport", "name: hello", "namespace: demo"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "status") {
		t.Errorf("the manifest has a status:\n%s", out.String())
	}
}
