package offloading

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/kit"
)

func TestClusterConditions(t *testing.T) {
	current := func(remote string, phase offv1beta1.MappingPhase) *offv1beta1.RemoteNamespaceStatus {
		return &offv1beta1.RemoteNamespaceStatus{RemoteNamespace: remote, Phase: phase}
	}
	refused := func(remote, reason, message string) *offv1beta1.RemoteNamespaceStatus {
		return &offv1beta1.RemoteNamespaceStatus{RemoteNamespace: remote, Phase: offv1beta1.MappingCreationLoopBackOff, Reason: reason, Message: message}
	}
	cases := []struct {
		name  string
		state clusterState
		// want is type=status/reason for each condition, in order.
		want    []string
		message string
	}{
		{"not selected", clusterState{RemoteName: "a-rome"},
			[]string{"OffloadingRequired=False/ClusterNotSelected"}, "not selected this cluster"},
		{"selector error", clusterState{SelectorErr: errors.New("bad operator")},
			[]string{"OffloadingRequired=False/InvalidClusterSelector"}, "bad operator"},
		{"waiting for the provider", clusterState{Selected: true, RemoteName: "a-rome"},
			[]string{"OffloadingRequired=True/ClusterSelected", "Ready=Unknown/RemoteNamespacePending"}, "create namespace a-rome"},
		{"created", clusterState{Selected: true, RemoteName: "a-rome", Current: current("a-rome", offv1beta1.MappingAccepted)},
			[]string{"OffloadingRequired=True/ClusterSelected", "Ready=True/RemoteNamespaceCreated"}, "correctly offloaded"},
		{"reported under an old name", clusterState{Selected: true, RemoteName: "a", Current: current("a-rome", offv1beta1.MappingAccepted)},
			[]string{"OffloadingRequired=True/ClusterSelected", "Ready=Unknown/RemoteNamespacePending"}, ""},
		{"foreign namespace", clusterState{Selected: true, RemoteName: "a", Current: current("a", offv1beta1.MappingCreationLoopBackOff)},
			[]string{"OffloadingRequired=True/ClusterSelected", "Ready=False/RemoteNamespaceAlreadyExists"}, "CreationLoopBackOff"},
		{"old twin terminating", clusterState{Selected: true, RemoteName: "a", Current: current("a", offv1beta1.MappingTerminating)},
			[]string{"OffloadingRequired=True/ClusterSelected", "Ready=Unknown/RemoteNamespaceTerminating"}, "still being deleted"},
		{"name too long", clusterState{Selected: true, RemoteName: "x", NameReason: ReasonNameTooLong, NameErr: errors.New("more than the 63 allowed")},
			[]string{"OffloadingRequired=True/ClusterSelected", "Ready=False/RemoteNameTooLong"}, "63"},
		{"name refused by the provider", clusterState{Selected: true, RemoteName: "monitoring", Current: refused("monitoring", ReasonNotAllowed, "ask the provider's administrators")},
			[]string{"OffloadingRequired=True/ClusterSelected", "Ready=False/RemoteNameNotAllowed"}, "Cluster milan refuses namespace monitoring: ask the provider's administrators"},
		{"over the provider's cap", clusterState{Selected: true, RemoteName: "a-rome", Current: refused("a-rome", ReasonTooMany, "--max-twin-namespaces-per-tenant")},
			[]string{"OffloadingRequired=True/ClusterSelected", "Ready=False/TooManyRemoteNamespaces"}, "--max-twin-namespaces-per-tenant"},
		{"a provider's unknown reason is not taken", clusterState{Selected: true, RemoteName: "a", Current: refused("a", "Hacked", "click here")},
			[]string{"OffloadingRequired=True/ClusterSelected", "Ready=False/RemoteNamespaceAlreadyExists"}, "CreationLoopBackOff"},
		{"a provider's long message is cut", clusterState{Selected: true, RemoteName: "a", Current: refused("a", ReasonNotAllowed, strings.Repeat("x", 5000))},
			[]string{"OffloadingRequired=True/ClusterSelected", "Ready=False/RemoteNameNotAllowed"}, strings.Repeat("x", maxProviderMessage) + "…"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := clusterConditions("milan", c.state)
			var summary []string
			for _, g := range got {
				summary = append(summary, string(g.Type)+"="+string(g.Status)+"/"+g.Reason)
			}
			if strings.Join(summary, " ") != strings.Join(c.want, " ") {
				t.Fatalf("got %v, want %v", summary, c.want)
			}
			if last := got[len(got)-1]; !strings.Contains(last.Message, c.message) || len(last.Message) > 600 {
				t.Errorf("message %q lacks %q", last.Message, c.message)
			}
			if c.state.wanted() != (len(got) == 2 && c.state.NameErr == nil) {
				t.Errorf("wanted() = %v for %+v", c.state.wanted(), c.state)
			}
		})
	}
}

func TestWithTransitionTimes(t *testing.T) {
	then, now := metav1.NewTime(time.Unix(1000, 0)), metav1.NewTime(time.Unix(2000, 0))
	old := offv1beta1.RemoteNamespaceConditions{
		{Type: offv1beta1.NamespaceOffloadingRequired, Status: corev1.ConditionTrue, LastTransitionTime: then},
		{Type: offv1beta1.NamespaceReady, Status: corev1.ConditionUnknown, LastTransitionTime: then},
	}
	got := withTransitionTimes(conds(corev1.ConditionTrue, corev1.ConditionTrue), old, now)
	if !got[0].LastTransitionTime.Equal(&then) {
		t.Errorf("unchanged condition restamped: %v", got[0].LastTransitionTime)
	}
	if !got[1].LastTransitionTime.Equal(&now) {
		t.Errorf("changed condition kept its old time: %v", got[1].LastTransitionTime)
	}
}

func TestReadyCondition(t *testing.T) {
	T, F, U := corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown
	failed := offv1beta1.RemoteNamespaceConditions{{Type: offv1beta1.NamespaceOffloadingRequired, Status: T},
		{Type: offv1beta1.NamespaceReady, Status: F, Reason: ReasonNameTooLong, Message: "too long"}}
	badSelector := offv1beta1.RemoteNamespaceConditions{{Type: offv1beta1.NamespaceOffloadingRequired, Status: F,
		Reason: ReasonInvalidSelector, Message: "the cluster selector is not valid: x"}}
	cases := []struct {
		name    string
		phase   offv1beta1.OffloadingPhase
		conds   map[string]offv1beta1.RemoteNamespaceConditions
		pending []string
		status  metav1.ConditionStatus
		message string
	}{
		{"ready", offv1beta1.ReadyOffloadingPhase, map[string]offv1beta1.RemoteNamespaceConditions{"naples": conds(T, T), "milan": conds(T, T)},
			nil, metav1.ConditionTrue, "Namespace offloaded to milan, naples"},
		{"in progress", offv1beta1.InProgressOffloadingPhase, map[string]offv1beta1.RemoteNamespaceConditions{"milan": conds(T, T), "naples": conds(T, U)},
			nil, metav1.ConditionUnknown, "Waiting for the twin namespaces on naples"},
		{"some failed", offv1beta1.SomeFailedOffloadingPhase, map[string]offv1beta1.RemoteNamespaceConditions{"milan": conds(T, T), "naples": failed},
			nil, metav1.ConditionFalse, "naples: RemoteNameTooLong: too long"},
		{"no peer", offv1beta1.NoClusterSelectedOffloadingPhase, nil, nil, metav1.ConditionFalse, "No cluster is peered"},
		{"nothing matches", offv1beta1.NoClusterSelectedOffloadingPhase, map[string]offv1beta1.RemoteNamespaceConditions{"milan": conds(F, U)},
			nil, metav1.ConditionFalse, "No peered cluster matches"},
		{"selector error", offv1beta1.NoClusterSelectedOffloadingPhase, map[string]offv1beta1.RemoteNamespaceConditions{"milan": badSelector},
			nil, metav1.ConditionFalse, "the cluster selector is not valid"},
		{"terminating", offv1beta1.TerminatingOffloadingPhase, nil, []string{"milan"}, metav1.ConditionFalse, "removed from milan"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var conds []metav1.Condition
			kit.SetCondition(&conds, 3, readyCondition(c.phase, c.conds, c.pending))
			got := meta.FindStatusCondition(conds, ReadyCondition)
			if got == nil || got.Status != c.status || got.Reason != string(c.phase) || got.ObservedGeneration != 3 || !strings.Contains(got.Message, c.message) {
				t.Fatalf("got %+v, want status %s reason %s and a message with %q", got, c.status, c.phase, c.message)
			}
		})
	}
}
