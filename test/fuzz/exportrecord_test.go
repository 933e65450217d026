package fuzz

import (
	"net/netip"
	"strings"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/ipam"
	"github.com/liqo-go/liqo/pkg/mcs/record"
	"github.com/liqo-go/liqo/pkg/mcs/trust"
)

// FuzzExportRecord: whatever ExportRecord a peer writes (its source label,
// name, Service, ports and endpoint addresses), the receiver imports it
// only as the sender's own export, under the name the sender would give
// it, with every endpoint at an address in the sender's remapped
// networks; nothing the receiver keeps names another cluster.
func FuzzExportRecord(f *testing.F) {
	f.Add("milan", "milan.demo.hello", "demo", "hello", int32(42), "10.244.1.5,10.244.2.7")
	f.Add("naples", "milan.demo.hello", "demo", "hello", int32(42), "10.244.1.5")
	f.Add("milan", "milan.demo.hello", "demo", "hello", int32(0), "10.96.0.1,::1,not-an-ip")
	f.Add("milan", "milan.kube-system.kube-dns", "kube-system", "kube-dns", int32(53), "169.254.169.254")
	m, err := ipam.NewMapping([]string{"10.244.0.0/16"}, []string{"10.71.0.0/16"})
	if err != nil {
		f.Fatal(err)
	}
	allowed := netip.MustParsePrefix("10.71.0.0/16")
	f.Fuzz(func(t *testing.T, source, name, namespace, service string, port int32, addrs string) {
		r := &offv1beta1.ExportRecord{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "liqo-tenant-milan", Labels: map[string]string{mcsv1beta1.LabelSourceCluster: source}},
			Spec: offv1beta1.ExportRecordSpec{Namespace: namespace, Service: service, Type: mcsv1beta1.ClusterSetIP,
				Ports:     []mcsv1beta1.ServicePort{{Name: "p", Port: port}},
				Endpoints: offv1beta1.EndpointSliceTemplate{AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{{Addresses: strings.Split(addrs, ",")}}}},
		}
		e, eps, err := trust.Record("milan", m, r)
		if err != nil {
			return
		}
		if source != "milan" || e.Cluster != "milan" {
			t.Fatalf("a record labelled %q imported as cluster %q's export", source, e.Cluster)
		}
		if want := record.Name("milan", namespace, service); name != want {
			t.Fatalf("a record named %q imported for %s/%s (its name is %q)", name, namespace, service, want)
		}
		for _, ep := range eps {
			for _, a := range ep.Addresses {
				if ip, err := netip.ParseAddr(a); err != nil || !allowed.Contains(ip) {
					t.Fatalf("address %q imported from milan, outside its remapped networks", a)
				}
			}
		}
	})
}
