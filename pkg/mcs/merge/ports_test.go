package merge

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

// TestServedPorts: the older export has tcp:42; a newer one's tcp is 4242
// (it lost the conflict) and its tcp2:4343 joined the union. The newer
// cluster's endpoints serve tcp2 only, so the import's port 42 never
// reaches it.
func TestServedPorts(t *testing.T) {
	tcp := func(name string, port int32) mcsv1beta1.ServicePort {
		return mcsv1beta1.ServicePort{Name: name, Port: port, Protocol: corev1.ProtocolTCP}
	}
	older := Export{Cluster: "rome", Ports: []mcsv1beta1.ServicePort{tcp("tcp", 42)}}
	newer := Export{Cluster: "milan", Ports: []mcsv1beta1.ServicePort{tcp("tcp", 4242), tcp("tcp2", 4343)}}
	imported := unionPorts([]Export{older, newer})
	slicePorts := []discoveryv1.EndpointPort{
		{Name: ptr.To("tcp"), Port: ptr.To[int32](42), Protocol: ptr.To(corev1.ProtocolTCP)},
		{Name: ptr.To("tcp2"), Port: ptr.To[int32](43), Protocol: ptr.To(corev1.ProtocolTCP)},
	}
	got := ServedPorts(imported, newer, slicePorts)
	if len(got) != 1 || *got[0].Name != "tcp2" {
		t.Errorf("the newer export serves %v, want tcp2 only", got)
	}
	if got := ServedPorts(imported, older, slicePorts[:1]); len(got) != 1 || *got[0].Name != "tcp" {
		t.Errorf("the older export serves %v, want tcp", got)
	}
	// A slice port its Service does not name serves nothing.
	if got := ServedPorts(imported, older, []discoveryv1.EndpointPort{{Name: ptr.To("other"), Port: ptr.To[int32](1)}}); len(got) != 0 {
		t.Errorf("an unknown port serves %v", got)
	}
}
