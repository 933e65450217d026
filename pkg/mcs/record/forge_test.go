package record

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/liqo-go/liqo/pkg/mcs/merge"
)

func endpoint(addr string, ready *bool) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: []string{addr}, NodeName: ptr.To("node-1"), Hostname: ptr.To("h-" + addr),
		Conditions: discoveryv1.EndpointConditions{Ready: ready}}
}

// TestForge: the record of an export carries the export as merge sees it,
// and the ready endpoints of the primary IP family, each once, sorted,
// without the exporting cluster's node names; Export reads it back.
func TestForge(t *testing.T) {
	se := &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "demo",
		CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))},
		Spec: mcsv1beta1.ServiceExportSpec{ExportedLabels: map[string]string{"tier": "web"}}}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "demo"},
		Spec: corev1.ServiceSpec{IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol}, Ports: []corev1.ServicePort{{Name: "tcp", Port: 42}}}}
	ports := []discoveryv1.EndpointPort{{Name: ptr.To("tcp"), Port: ptr.To[int32](8042)}}
	slices := []discoveryv1.EndpointSlice{
		{AddressType: discoveryv1.AddressTypeIPv4, Ports: ports, Endpoints: []discoveryv1.Endpoint{
			endpoint("10.0.0.9", nil), endpoint("10.0.0.3", ptr.To(true)), endpoint("10.0.0.5", ptr.To(false)),
		}},
		// The same endpoint in a second slice, while it moves.
		{AddressType: discoveryv1.AddressTypeIPv4, Ports: ports, Endpoints: []discoveryv1.Endpoint{endpoint("10.0.0.3", ptr.To(true))}},
		{AddressType: discoveryv1.AddressTypeIPv6, Ports: ports, Endpoints: []discoveryv1.Endpoint{endpoint("fd00::1", nil)}},
	}
	r := Forge("milan", "liqo-tenant-rome", se, svc, slices)
	if r.Name != "milan.demo.hello" || r.Namespace != "liqo-tenant-rome" || r.Labels[mcsv1beta1.LabelSourceCluster] != "milan" {
		t.Errorf("meta %+v", r.ObjectMeta)
	}
	got := r.Spec.Endpoints
	if got.AddressType != discoveryv1.AddressTypeIPv4 || len(got.Endpoints) != 2 ||
		got.Endpoints[0].Addresses[0] != "10.0.0.3" || got.Endpoints[1].Addresses[0] != "10.0.0.9" || *got.Ports[0].Port != 8042 {
		t.Fatalf("endpoints %+v", got)
	}
	if got.Endpoints[0].NodeName != nil || *got.Endpoints[0].Hostname != "h-10.0.0.3" || !*got.Endpoints[1].Conditions.Ready {
		t.Errorf("endpoint %+v", got.Endpoints[0])
	}
	if want := merge.FromService("milan", se, svc); !reflect.DeepEqual(Export(r), want) {
		t.Errorf("Export(Forge()) = %+v, want %+v", Export(r), want)
	}

	svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}
	if got := Forge("milan", "x", se, svc, slices).Spec.Endpoints; got.AddressType != discoveryv1.AddressTypeIPv6 || len(got.Endpoints) != 1 {
		t.Errorf("IPv6 Service: %+v", got)
	}
}
