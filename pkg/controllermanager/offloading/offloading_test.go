package offloading

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

func TestRemoteName(t *testing.T) {
	long := strings.Repeat("n", 60)
	cases := []struct {
		name, namespace string
		spec            offv1beta1.NamespaceOffloadingSpec
		want, reason    string
	}{
		{"default name", "liqo-demo", offv1beta1.NamespaceOffloadingSpec{NamespaceMappingStrategy: offv1beta1.DefaultNameMappingStrategy}, "liqo-demo-rome", ""},
		{"empty strategy is the default", "liqo-demo", offv1beta1.NamespaceOffloadingSpec{}, "liqo-demo-rome", ""},
		{"same name", "liqo-demo", offv1beta1.NamespaceOffloadingSpec{NamespaceMappingStrategy: offv1beta1.EnforceSameNameMappingStrategy}, "liqo-demo", ""},
		{"selected name", "liqo-demo", offv1beta1.NamespaceOffloadingSpec{NamespaceMappingStrategy: offv1beta1.SelectedNameMappingStrategy, RemoteNamespaceName: "elsewhere"}, "elsewhere", ""},
		{"default name too long", long, offv1beta1.NamespaceOffloadingSpec{}, long + "-rome", ReasonNameTooLong},
		{"same name fits", long, offv1beta1.NamespaceOffloadingSpec{NamespaceMappingStrategy: offv1beta1.EnforceSameNameMappingStrategy}, long, ""},
		{"selected name invalid", "x", offv1beta1.NamespaceOffloadingSpec{NamespaceMappingStrategy: offv1beta1.SelectedNameMappingStrategy, RemoteNamespaceName: "Not_Valid"}, "Not_Valid", ReasonInvalidName},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, reason, err := RemoteName(&c.spec, c.namespace, "rome")
			if got != c.want || reason != c.reason || (err != nil) != (c.reason != "") {
				t.Fatalf("got %q %q %v; want %q %q", got, reason, err, c.want, c.reason)
			}
		})
	}
}

func vnode(id string, labels map[string]string) corev1.Node {
	l := map[string]string{consts.TypeLabel: consts.TypeVirtualNode, consts.RemoteClusterIDLabel: id}
	for k, v := range labels {
		l[k] = v
	}
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: id, Labels: l}}
}

func TestSelectClusters(t *testing.T) {
	nodes := []corev1.Node{
		vnode("milan", map[string]string{"region": "north"}),
		vnode("naples", map[string]string{"region": "south"}),
		{ObjectMeta: metav1.ObjectMeta{Name: "worker-0", Labels: map[string]string{"region": "north"}}},
	}
	term := func(op corev1.NodeSelectorOperator, values ...string) *corev1.NodeSelector {
		return &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: "region", Operator: op, Values: values}}}}}
	}
	cases := []struct {
		name     string
		selector *corev1.NodeSelector
		want     string
		wantErr  bool
	}{
		{"no terms selects every peer", &corev1.NodeSelector{}, "milan,naples", false},
		{"nil selects every peer", nil, "milan,naples", false},
		{"by label, physical nodes ignored", term(corev1.NodeSelectorOpIn, "north"), "milan", false},
		{"none matches", term(corev1.NodeSelectorOpIn, "east"), "", false},
		{"NotIn", term(corev1.NodeSelectorOpNotIn, "north"), "naples", false},
		{"syntax error", term(corev1.NodeSelectorOpGt, "north", "south"), "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := SelectClusters(c.selector, nodes)
			if (err != nil) != c.wantErr || strings.Join(got, ",") != c.want {
				t.Fatalf("got %v, %v; want %q (error %v)", got, err, c.want, c.wantErr)
			}
		})
	}
}

func conds(required, ready corev1.ConditionStatus) offv1beta1.RemoteNamespaceConditions {
	return offv1beta1.RemoteNamespaceConditions{
		{Type: offv1beta1.NamespaceOffloadingRequired, Status: required},
		{Type: offv1beta1.NamespaceReady, Status: ready},
	}
}

func TestPhase(t *testing.T) {
	T, F, U := corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown
	cases := []struct {
		name        string
		terminating bool
		conds       map[string]offv1beta1.RemoteNamespaceConditions
		want        offv1beta1.OffloadingPhase
	}{
		{"terminating wins", true, map[string]offv1beta1.RemoteNamespaceConditions{"a": conds(T, T)}, offv1beta1.TerminatingOffloadingPhase},
		{"no cluster", false, nil, offv1beta1.NoClusterSelectedOffloadingPhase},
		{"none selected", false, map[string]offv1beta1.RemoteNamespaceConditions{"a": conds(F, U)}, offv1beta1.NoClusterSelectedOffloadingPhase},
		{"all ready", false, map[string]offv1beta1.RemoteNamespaceConditions{"a": conds(T, T), "b": conds(T, T), "c": conds(F, U)}, offv1beta1.ReadyOffloadingPhase},
		{"one pending", false, map[string]offv1beta1.RemoteNamespaceConditions{"a": conds(T, T), "b": conds(T, U)}, offv1beta1.InProgressOffloadingPhase},
		{"one failed", false, map[string]offv1beta1.RemoteNamespaceConditions{"a": conds(T, T), "b": conds(T, F)}, offv1beta1.SomeFailedOffloadingPhase},
		{"all failed", false, map[string]offv1beta1.RemoteNamespaceConditions{"a": conds(T, F), "b": conds(T, F)}, offv1beta1.AllFailedOffloadingPhase},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Phase(c.terminating, c.conds); got != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
		})
	}
}
