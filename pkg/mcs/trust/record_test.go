package trust

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/ipam"
	"github.com/liqo-go/liqo/pkg/mcs/record"
)

// milanRecord is the record of milan's export of demo/hello with one
// endpoint in milan's pod CIDR.
func milanRecord() *offv1beta1.ExportRecord {
	se := &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(time.Now())}}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "demo"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "tcp", Port: 42}}}}
	eps := []discoveryv1.EndpointSlice{{AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.1.7"}}}}}
	return record.Forge("milan", "liqo-tenant-rome", se, svc, eps)
}

// TestRecord sends the hostile records a peer could write: each is refused
// naming its fault; a well-formed one is imported at the remapped address.
func TestRecord(t *testing.T) {
	peer, err := ipam.NewMapping([]string{"10.244.0.0/16"}, []string{"10.71.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	e, eps, err := Record("milan", peer, milanRecord())
	if err != nil || e.Cluster != "milan" || eps[0].Addresses[0] != "10.71.1.7" {
		t.Fatalf("a well-formed record: %+v %+v %v", e, eps, err)
	}
	tests := []struct {
		name string
		edit func(*offv1beta1.ExportRecord)
		want string
	}{
		{"claiming another cluster", func(r *offv1beta1.ExportRecord) { r.Labels[mcsv1beta1.LabelSourceCluster] = "naples" }, `claims source cluster "naples"`},
		{"claiming the receiver", func(r *offv1beta1.ExportRecord) { r.Labels[mcsv1beta1.LabelSourceCluster] = "rome" }, `claims source cluster "rome"`},
		{"claiming no cluster", func(r *offv1beta1.ExportRecord) { delete(r.Labels, mcsv1beta1.LabelSourceCluster) }, `claims source cluster ""`},
		{"named as another Service's", func(r *offv1beta1.ExportRecord) { r.Name = "milan.demo.other" }, "should be named milan.demo.hello"},
		{"a bad namespace", func(r *offv1beta1.ExportRecord) { r.Spec.Namespace, r.Name = "a/b", "milan.a/b.hello" }, `namespace "a/b"`},
		{"an address outside milan's networks", func(r *offv1beta1.ExportRecord) {
			r.Spec.Endpoints.Endpoints[0].Addresses[0] = "10.96.0.1"
		}, "not in the cluster's own networks"},
		{"a bad port", func(r *offv1beta1.ExportRecord) { r.Spec.Ports[0].Port = 0 }, "not in 1-65535"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := milanRecord()
			tt.edit(r)
			if _, _, err := Record("milan", peer, r); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}
