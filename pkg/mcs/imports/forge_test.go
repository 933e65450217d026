package imports

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/liqo-go/liqo/pkg/mcs/merge"
)

func TestNames(t *testing.T) {
	long := strings.Repeat("s", 63)
	for _, n := range []string{ServiceName("hello"), ServiceName(long), SliceName(long, strings.Repeat("c", 63)), SliceName("hello", "milan")} {
		if errs := validation.IsDNS1035Label(n); len(errs) > 0 {
			t.Errorf("%q: %v", n, errs)
		}
	}
	if ServiceName(long) == ServiceName(long[:62]+"t") || SliceName("hello", "milan") != "liqo-mcs-hello-milan" {
		t.Error("names clash or changed")
	}
}

// TestForge: the import carries the merged properties; its EndpointSlices
// have the MCS labels and our managed-by, and name the import's Service
// only when there is one.
func TestForge(t *testing.T) {
	m := merge.Merge([]merge.Export{{Cluster: "milan", Type: mcsv1beta1.ClusterSetIP, SessionAffinity: corev1.ServiceAffinityClientIP,
		Ports:      []mcsv1beta1.ServicePort{{Name: "tcp", Protocol: corev1.ProtocolTCP, Port: 42}},
		IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol}, Labels: map[string]string{"tier": "web", mcsv1beta1.LabelServiceName: "x"}}})
	si := ServiceImport("demo", "hello", m, []string{"10.96.0.20"})
	if si.Spec.IPs[0] != "10.96.0.20" || si.Labels["tier"] != "web" || si.Labels[mcsv1beta1.LabelServiceName] != "hello" ||
		si.Status.Clusters[0].Cluster != "milan" || si.Spec.SessionAffinity != corev1.ServiceAffinityClientIP {
		t.Errorf("ServiceImport %+v", si)
	}
	svc := Service("demo", "hello", m)
	if svc.Name != "liqo-mcs-hello" || svc.Spec.Selector != nil || svc.Spec.Ports[0].Port != 42 || svc.Spec.SessionAffinity != corev1.ServiceAffinityClientIP {
		t.Errorf("Service %+v", svc)
	}
	eps := EndpointSlice("demo", "hello", svc.Name, "milan", discoveryv1.AddressTypeIPv4, nil, nil)
	if l := eps.Labels; l[mcsv1beta1.LabelServiceName] != "hello" || l[mcsv1beta1.LabelSourceCluster] != "milan" ||
		l[discoveryv1.LabelManagedBy] != ManagedBy || l[discoveryv1.LabelServiceName] != svc.Name {
		t.Errorf("labels %v", l)
	}
	if _, ok := EndpointSlice("demo", "hello", "", "milan", discoveryv1.AddressTypeIPv4, nil, nil).Labels[discoveryv1.LabelServiceName]; ok {
		t.Error("a headless import's slice names a Service")
	}
}
