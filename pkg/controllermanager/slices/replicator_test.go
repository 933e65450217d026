package slices

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

func slice(consumer string, labels map[string]string) *authv1beta1.ResourceSlice {
	id := corev1beta1.ClusterID(consumer)
	return &authv1beta1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "milan", Namespace: consts.TenantNamespace("milan"), Labels: labels},
		Spec: authv1beta1.ResourceSliceSpec{ConsumerClusterID: &id, Resources: rl("4", "8Gi", "110"), CSR: []byte("pem")}}
}

func TestReplicatedKindMine(t *testing.T) {
	k := ReplicatedKind("rome")
	cases := []struct {
		name string
		s    *authv1beta1.ResourceSlice
		want bool
	}{
		{"own slice", slice("rome", nil), true},
		{"another consumer's", slice("milan", nil), false},
		{"a replica made here", slice("rome", map[string]string{consts.ReplicationLabel: "true"}), false},
		{"no consumer", &authv1beta1.ResourceSlice{}, false},
	}
	for _, c := range cases {
		if got := k.Mine(c.s); got != c.want {
			t.Errorf("%s: Mine = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestReplicatedKindSync(t *testing.T) {
	k := ReplicatedKind("rome")
	local := slice("rome", nil)
	replica := k.Forge(local)
	if replica.Spec.CSR != nil {
		t.Errorf("the CSR was copied to the provider")
	}
	if k.SyncSpec(local, replica) {
		t.Errorf("a fresh replica needed a spec update")
	}
	local.Spec.Resources = rl("8", "8Gi", "110")
	if !k.SyncSpec(local, replica) || !replica.Spec.Resources.Cpu().Equal(*local.Spec.Resources.Cpu()) {
		t.Errorf("a changed request was not copied: %v", replica.Spec.Resources)
	}
	if replica.Spec.CSR != nil {
		t.Errorf("the CSR reached the replica on update")
	}

	replica.Status.Resources = rl("4", "8Gi", "110")
	metav1.SetMetaDataAnnotation(&replica.ObjectMeta, consts.DecidedAnnotation, "cpu=8")
	if !k.SyncStatus(replica, local) || !local.Status.Resources.Cpu().Equal(*replica.Status.Resources.Cpu()) {
		t.Errorf("the decision was not copied back: %v", local.Status)
	}
	if k.SyncStatus(replica, local) {
		t.Errorf("an equal status reported a change")
	}
	if !k.SyncMeta(replica, local) || local.Annotations[consts.DecidedAnnotation] != "cpu=8" {
		t.Errorf("the decision mark was not copied back: %v", local.Annotations)
	}
	if k.SyncMeta(replica, local) {
		t.Errorf("an equal decision mark reported a change")
	}
}

// TestReplicatedKindDropsHostileFit: a fit summary the provider could not
// have made (more groups than allowed, negative free resources, groups
// counting more nodes than it has) does not reach the consumer's slice;
// a valid one does.
func TestReplicatedKindDropsHostileFit(t *testing.T) {
	k := ReplicatedKind("rome")
	group := authv1beta1.NodeFit{Count: 1, Free: rl("4", "8Gi", "110")}
	hostile := map[string]*authv1beta1.FitSummary{
		"65 groups":              {Nodes: 65, Groups: make([]authv1beta1.NodeFit, 65)},
		"negative free":          {Nodes: 1, Groups: []authv1beta1.NodeFit{{Count: 1, Free: rl("-4", "8Gi", "110")}}},
		"more nodes than it has": {Nodes: 1, Groups: []authv1beta1.NodeFit{{Count: 1000, Free: rl("4", "8Gi", "110")}}},
		"a group of no node":     {Nodes: 1, Groups: []authv1beta1.NodeFit{{Count: 0, Free: rl("4", "8Gi", "110")}}},
	}
	for name, fit := range hostile {
		for i := range fit.Groups {
			if fit.Groups[i].Count == 0 && name == "65 groups" {
				fit.Groups[i] = group
			}
		}
		local, replica := slice("rome", nil), slice("rome", nil)
		replica.Status.Resources, replica.Status.Fit = rl("4", "8Gi", "110"), fit
		k.SyncStatus(replica, local)
		if local.Status.Fit != nil || local.Status.Resources == nil {
			t.Errorf("%s: the consumer's slice has fit %v, resources %v", name, local.Status.Fit, local.Status.Resources)
		}
	}
	local, replica := slice("rome", nil), slice("rome", nil)
	replica.Status.Fit = &authv1beta1.FitSummary{Nodes: 2, Groups: []authv1beta1.NodeFit{{Count: 2, Free: rl("4", "8Gi", "110")}}}
	if !k.SyncStatus(replica, local) || local.Status.Fit == nil || local.Status.Fit.Groups[0].Count != 2 {
		t.Errorf("a valid summary was not copied: %+v", local.Status.Fit)
	}
}
