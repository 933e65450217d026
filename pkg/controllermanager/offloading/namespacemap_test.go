package offloading

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

func TestReplicatedMapKind(t *testing.T) {
	k := ReplicatedMapKind()
	key := consts.NamespaceMapKey("milan")
	if key.Namespace != consts.TenantNamespace("milan") || key.Name != "milan" {
		t.Fatalf("consts.NamespaceMapKey(milan) = %v", key)
	}
	local := &offv1beta1.NamespaceMap{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, Labels: namespaceMapLabels("milan")},
		Spec: offv1beta1.NamespaceMapSpec{DesiredMapping: map[string]string{"a": "a-rome"}}}
	for _, c := range []struct {
		name string
		m    *offv1beta1.NamespaceMap
		want bool
	}{
		{"own map", local, true},
		{"a consumer's replica", &offv1beta1.NamespaceMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Labels: map[string]string{consts.ReplicationLabel: "true"}}}, false},
		{"outside tenant namespaces", &offv1beta1.NamespaceMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default"}}, false},
	} {
		if got := k.Mine(c.m); got != c.want {
			t.Errorf("%s: Mine = %v, want %v", c.name, got, c.want)
		}
	}

	replica := k.Forge(local)
	local.Spec.DesiredMapping["b"] = "b-rome"
	if len(replica.Spec.DesiredMapping) != 1 {
		t.Fatalf("the replica shares the local map: %v", replica.Spec.DesiredMapping)
	}
	if !k.SyncSpec(local, replica) || replica.Spec.DesiredMapping["b"] != "b-rome" || k.SyncSpec(local, replica) {
		t.Errorf("spec sync: %v", replica.Spec.DesiredMapping)
	}
	replica.Status.CurrentMapping = map[string]offv1beta1.RemoteNamespaceStatus{"a": {RemoteNamespace: "a-rome", Phase: offv1beta1.MappingAccepted}}
	if !k.SyncStatus(replica, local) || local.Status.CurrentMapping["a"].Phase != offv1beta1.MappingAccepted || k.SyncStatus(replica, local) {
		t.Errorf("status sync: %v", local.Status)
	}
}

func TestOffloadingsOfMap(t *testing.T) {
	m := &offv1beta1.NamespaceMap{Spec: offv1beta1.NamespaceMapSpec{DesiredMapping: map[string]string{"a": "a-rome"}},
		Status: offv1beta1.NamespaceMapStatus{CurrentMapping: map[string]offv1beta1.RemoteNamespaceStatus{"a": {}, "gone": {}}}}
	got := map[string]bool{}
	for _, r := range offloadingsOfMap(t.Context(), m) {
		if r.Name != offv1beta1.NamespaceOffloadingName {
			t.Errorf("request for %v", r)
		}
		got[r.Namespace] = true
	}
	if len(got) != 2 || !got["a"] || !got["gone"] {
		t.Errorf("got %v, want the offloadings of a and gone", got)
	}
}
