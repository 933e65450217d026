package dashboard

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/info"
)

func fc(id string, role corev1beta1.RoleType, auth, off string) corev1beta1.ForeignCluster {
	mod := func(summary string) corev1beta1.Module {
		if summary == "" {
			return corev1beta1.Module{}
		}
		m := corev1beta1.Module{Enabled: true, Summary: summary,
			Conditions: []corev1beta1.Condition{{Type: corev1beta1.OffloadingNodeStatusCondition, Status: corev1beta1.ReadyStatus}}}
		if summary != "Healthy" {
			m.Conditions[0].Status, m.Conditions[0].Reason = corev1beta1.ErrorStatus, "R"
		}
		return m
	}
	return corev1beta1.ForeignCluster{ObjectMeta: metav1.ObjectMeta{Name: id}, Spec: corev1beta1.ForeignClusterSpec{ClusterID: corev1beta1.ClusterID(id)},
		Status: corev1beta1.ForeignClusterStatus{Role: role, Modules: corev1beta1.Modules{Authentication: mod(auth), Offloading: mod(off)}}}
}

// TestBuildEdges: an edge per consumer → provider pair, from either
// side's ForeignCluster, its health the worst of both sides' enabled
// modules; peers no context reaches become unwatched clusters.
func TestBuildEdges(t *testing.T) {
	st := Build([]Snapshot{
		{Context: "ctx-rome", ID: "rome", Objects: info.Objects{ForeignClusters: []corev1beta1.ForeignCluster{
			fc("milan", corev1beta1.ProviderRole, "Healthy", "Healthy"),
			fc("paris", corev1beta1.ConsumerAndProviderRole, "Healthy", "Pending"),
			fc("gone", corev1beta1.UnknownRole, "", ""),
		}}},
		{Context: "ctx-milan", ID: "milan", Objects: info.Objects{ForeignClusters: []corev1beta1.ForeignCluster{
			fc("rome", corev1beta1.ConsumerRole, "Unhealthy", ""),
		}}},
		{Context: "broken", Error: "unreachable"},
	})
	var ids []string
	for _, p := range st.Peerings {
		ids = append(ids, p.ID+":"+p.Health)
	}
	if want := []string{"paris->rome:Pending", "rome->milan:Unhealthy", "rome->paris:Pending"}; !slices.Equal(ids, want) {
		t.Errorf("peerings %v, want %v", ids, want)
	}
	var clusters []string
	for _, c := range st.Clusters {
		clusters = append(clusters, c.ID+":"+map[bool]string{true: "watched", false: "not"}[c.Watched])
	}
	if want := []string{"broken:not", "milan:watched", "paris:not", "rome:watched"}; !slices.Equal(clusters, want) {
		t.Errorf("clusters %v, want %v", clusters, want)
	}
	p := st.Peerings[1]
	if !slices.Equal(p.SeenBy, []string{"rome", "milan"}) || p.Authentication.Status != HealthUnhealthy || p.Networking.Status != HealthDisabled ||
		len(p.Authentication.Problems) != 1 || p.Authentication.Problems[0] != "milan: OffloadingNodeStatus Error: R" {
		t.Errorf("rome->milan %+v", p)
	}
}

// TestBuildCIDRsAndUsage: the remapped CIDRs come from each side's
// Configuration; usage counts the pods on the provider's virtual nodes
// but the refused ones.
func TestBuildCIDRsAndUsage(t *testing.T) {
	ns := consts.TenantNamespace("milan")
	cfg := netv1beta1.Configuration{ObjectMeta: metav1.ObjectMeta{Name: "milan", Namespace: ns},
		Spec:   netv1beta1.ConfigurationSpec{Remote: netv1beta1.ClusterConfig{CIDR: netv1beta1.ClusterConfigCIDR{Pod: []netv1beta1.CIDR{"10.244.0.0/16"}}}},
		Status: netv1beta1.ConfigurationStatus{Remote: &netv1beta1.ClusterConfig{CIDR: netv1beta1.ClusterConfigCIDR{Pod: []netv1beta1.CIDR{"10.71.0.0/16"}}}}}
	pod := func(name, node, reason, cpu string) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"}, Spec: corev1.PodSpec{NodeName: node,
			Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"nvidia.com/gpu": mustQ(cpu)}}}}}}
		p.Status.Phase, p.Status.Reason = corev1.PodRunning, reason
		return p
	}
	snap := Snapshot{ID: "rome", Objects: info.Objects{ForeignClusters: []corev1beta1.ForeignCluster{fc("milan", corev1beta1.ProviderRole, "Healthy", "Healthy")}},
		Configurations: []netv1beta1.Configuration{cfg},
		Pods:           []corev1.Pod{pod("a", "vk-milan", "", "1"), pod("b", "vk-milan", reasonOffloadingBackOff, "4"), pod("c", "worker", "", "2")}}
	snap.Objects.VirtualNodes = append(snap.Objects.VirtualNodes, vn("vk-milan", ns, "milan"))
	st := Build([]Snapshot{snap})
	p := st.Peerings[0]
	if len(p.CIDRs) != 1 || p.CIDRs[0] != (RemappedCIDR{Of: "milan", On: "rome", Kind: "pod", CIDR: "10.244.0.0/16", Remapped: "10.71.0.0/16"}) {
		t.Errorf("cidrs %+v", p.CIDRs)
	}
	if p.Used["nvidia.com/gpu"] != "1" {
		t.Errorf("used %v, want the one GPU of the pod milan runs", p.Used)
	}
}

// TestPodTrouble: what a pod's status says is wrong, in its own words.
func TestPodTrouble(t *testing.T) {
	pending := func(mutate func(*corev1.PodStatus)) *corev1.Pod {
		p := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending}}
		mutate(&p.Status)
		return p
	}
	for _, tc := range []struct {
		name          string
		pod           *corev1.Pod
		remote        bool
		trouble, text string
	}{
		{"refused", pending(func(s *corev1.PodStatus) {
			s.Reason, s.Message = reasonOffloadingBackOff, "cluster naples refused the pod: x"
		}), true,
			reasonOffloadingBackOff, "cluster naples refused the pod: x"},
		{"unschedulable", pending(func(s *corev1.PodStatus) {
			s.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/3 nodes"}}
		}), false, "Unschedulable", "0/3 nodes"},
		{"remote pending", pending(func(s *corev1.PodStatus) { s.Reason, s.Message = "Evicted", "by the provider" }), true, "RemotePending", "Evicted by the provider"},
		{"crash loop", &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "app",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off"}}}}}}, true,
			"CrashLoopBackOff", "app: back-off"},
		{"creating is fine", &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: "app",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}}}, true, "", ""},
		{"failed", &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "OOMKilled"}}, false, "Failed", "OOMKilled"},
		{"running is fine", &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning}}, true, "", ""},
		{"pending locally is fine", pending(func(*corev1.PodStatus) {}), false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			trouble, text := podTrouble(tc.pod, tc.remote)
			if trouble != tc.trouble || text != tc.text {
				t.Errorf("podTrouble = %q, %q; want %q, %q", trouble, text, tc.trouble, tc.text)
			}
		})
	}
}

func mustQ(s string) resource.Quantity { return resource.MustParse(s) }

func vn(name, ns, cluster string) offv1beta1.VirtualNode {
	return offv1beta1.VirtualNode{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: offv1beta1.VirtualNodeSpec{ClusterID: corev1beta1.ClusterID(cluster)}}
}
