package info

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
)

func fc(id string, role corev1beta1.RoleType, auth, off string) corev1beta1.ForeignCluster {
	f := corev1beta1.ForeignCluster{ObjectMeta: metav1.ObjectMeta{Name: id}, Spec: corev1beta1.ForeignClusterSpec{ClusterID: corev1beta1.ClusterID(id)}}
	f.Status.Role = role
	f.Status.Modules.Authentication = corev1beta1.Module{Enabled: auth != "Disabled", Summary: auth}
	f.Status.Modules.Offloading = corev1beta1.Module{Enabled: off != "Disabled", Summary: off}
	f.Status.Modules.Networking = corev1beta1.Module{Summary: "Disabled"}
	return f
}

func resources(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func vnode(ns, name string, quota corev1.ResourceList) offv1beta1.VirtualNode {
	vn := offv1beta1.VirtualNode{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	vn.Spec.ResourceQuota.Hard = quota
	return vn
}

func node(name string, ready corev1.ConditionStatus, reason string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready, Reason: reason}},
	}}
}

func quota(ns, name string, res corev1.ResourceList) offv1beta1.Quota {
	return offv1beta1.Quota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: offv1beta1.QuotaSpec{User: "liqo-consumer-x", Resources: res}}
}

var local = LocalCluster{ClusterID: "rome", Labels: map[string]string{"region": "europe"}, Namespace: "liqo",
	APIServerURL: "https://127.0.0.1:6443"}

func TestBuild(t *testing.T) {
	disabled := ModuleInfo{Status: "Disabled"}
	healthy := ModuleInfo{Enabled: true, Status: "Healthy"}
	noCreate := vnode("liqo-tenant-milan", "milan-2", nil)
	noCreate.Spec.CreateNode = new(false)

	withConditions := fc("milan", corev1beta1.ProviderRole, "Healthy", "Pending")
	withConditions.Status.APIServerURL = "https://milan:6443"
	withConditions.Status.TenantNamespace = corev1beta1.TenantNamespaceType{Local: "liqo-tenant-milan", Remote: "liqo-tenant-rome"}
	withConditions.Status.Modules.Offloading.Conditions = []corev1beta1.Condition{{
		Type: corev1beta1.OffloadingNodeStatusCondition, Status: corev1beta1.PendingStatus, Reason: "NodeMissing", Message: "node milan does not exist yet",
	}}

	customNS := fc("paris", corev1beta1.ProviderRole, "Healthy", "Healthy")
	customNS.Status.TenantNamespace.Local = "elsewhere"

	tests := []struct {
		name string
		objs Objects
		want []Peering
	}{
		{name: "no peerings", want: []Peering{}},
		{
			name: "provider with a ready virtual node",
			objs: Objects{
				ForeignClusters: []corev1beta1.ForeignCluster{fc("milan", corev1beta1.ProviderRole, "Healthy", "Healthy")},
				VirtualNodes:    []offv1beta1.VirtualNode{vnode("liqo-tenant-milan", "milan", resources("cpu", "4", "memory", "8Gi", "pods", "110"))},
				Nodes:           []corev1.Node{node("milan", corev1.ConditionTrue, "KubeletReady")},
				// A Quota in the same namespace is not shown: milan is not our consumer.
				Quotas: []offv1beta1.Quota{quota("liqo-tenant-milan", "q", resources("cpu", "1"))},
			},
			want: []Peering{{
				ClusterID: "milan", Role: "Provider", Authentication: healthy, Offloading: healthy, Networking: disabled,
				TenantNamespace:   TenantNamespace{Local: "liqo-tenant-milan"},
				VirtualNodes:      []VirtualNodeInfo{{Name: "milan", Ready: true}},
				ResourcesAcquired: map[string]string{"cpu": "4", "memory": "8Gi", "pods": "110"},
			}},
		},
		{
			name: "virtual nodes summed, missing and not-ready nodes, slices, conditions kept",
			objs: Objects{
				ForeignClusters: []corev1beta1.ForeignCluster{withConditions},
				VirtualNodes: []offv1beta1.VirtualNode{
					vnode("liqo-tenant-milan", "milan-1", resources("cpu", "2", "memory", "4Gi")),
					noCreate,
					vnode("liqo-tenant-milan", "milan", resources("cpu", "1500m", "memory", "4Gi")),
					vnode("liqo-tenant-naples", "naples", resources("cpu", "100")),
				},
				Nodes: []corev1.Node{node("milan", corev1.ConditionFalse, "KubeletNotReady")},
				ResourceSlices: []authv1beta1.ResourceSlice{{
					ObjectMeta: metav1.ObjectMeta{Namespace: "liqo-tenant-milan", Name: "milan"},
					Status: authv1beta1.ResourceSliceStatus{
						Conditions: []authv1beta1.ResourceSliceCondition{{Type: authv1beta1.ResourceSliceAuthentication, Status: authv1beta1.ResourceSliceAccepted}},
						Resources:  resources("cpu", "4"),
					},
				}},
			},
			want: []Peering{{
				ClusterID: "milan", Role: "Provider", Authentication: healthy, Networking: disabled,
				Offloading: ModuleInfo{Enabled: true, Status: "Pending", Conditions: []ConditionInfo{{
					Type: "OffloadingNodeStatus", Status: "Pending", Reason: "NodeMissing", Message: "node milan does not exist yet",
				}}},
				APIServerURL:    "https://milan:6443",
				TenantNamespace: TenantNamespace{Local: "liqo-tenant-milan", Remote: "liqo-tenant-rome"},
				VirtualNodes: []VirtualNodeInfo{
					{Name: "milan", Reason: "KubeletNotReady"},
					{Name: "milan-1", Reason: ReasonNodeMissing},
					{Name: "milan-2", Reason: ReasonNodeCreationOff},
				},
				ResourceSlices: []ResourceSliceInfo{{Name: "milan", Authentication: "Accepted", Resources: "Pending",
					Granted: map[string]string{"cpu": "4"}}},
				ResourcesAcquired: map[string]string{"cpu": "3500m", "memory": "8Gi"},
			}},
		},
		{
			name: "consumer sees quotas; sorted by cluster ID; unknown role; custom tenant namespace",
			objs: Objects{
				ForeignClusters: []corev1beta1.ForeignCluster{
					fc("venice", corev1beta1.ConsumerRole, "Healthy", "Healthy"),
					fc("bari", "", "Disabled", "Disabled"),
					customNS,
					fc("turin", corev1beta1.ConsumerAndProviderRole, "Healthy", "Healthy"),
				},
				VirtualNodes: []offv1beta1.VirtualNode{
					vnode("elsewhere", "paris", resources("cpu", "1")),
					vnode("liqo-tenant-paris", "ignored", resources("cpu", "9")),
					vnode("liqo-tenant-turin", "turin", resources("pods", "10")),
				},
				Nodes: []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "paris"}}},
				Quotas: []offv1beta1.Quota{
					quota("liqo-tenant-venice", "a", resources("cpu", "1", "memory", "1Gi")),
					quota("liqo-tenant-venice", "b", resources("cpu", "2")),
					quota("liqo-tenant-turin", "q", resources("memory", "2Gi")),
				},
			},
			want: []Peering{
				{ClusterID: "bari", Role: "Unknown", Authentication: disabled, Offloading: disabled, Networking: disabled,
					TenantNamespace: TenantNamespace{Local: "liqo-tenant-bari"}},
				{ClusterID: "paris", Role: "Provider", Authentication: healthy, Offloading: healthy, Networking: disabled,
					TenantNamespace:   TenantNamespace{Local: "elsewhere"},
					VirtualNodes:      []VirtualNodeInfo{{Name: "paris", Reason: ReasonNodeReadyUnreported}},
					ResourcesAcquired: map[string]string{"cpu": "1"}},
				{ClusterID: "turin", Role: "ConsumerAndProvider", Authentication: healthy, Offloading: healthy, Networking: disabled,
					TenantNamespace:   TenantNamespace{Local: "liqo-tenant-turin"},
					VirtualNodes:      []VirtualNodeInfo{{Name: "turin", Reason: ReasonNodeMissing}},
					ResourcesAcquired: map[string]string{"pods": "10"},
					ResourcesShared:   map[string]string{"memory": "2Gi"}},
				{ClusterID: "venice", Role: "Consumer", Authentication: healthy, Offloading: healthy, Networking: disabled,
					TenantNamespace: TenantNamespace{Local: "liqo-tenant-venice"},
					ResourcesShared: map[string]string{"cpu": "3", "memory": "1Gi"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Build(local, &tt.objs)
			if !reflect.DeepEqual(got.Local, local) {
				t.Errorf("local = %+v, want %+v", got.Local, local)
			}
			if !reflect.DeepEqual(got.Peerings, tt.want) {
				t.Errorf("peerings:\n got %+v\nwant %+v", got.Peerings, tt.want)
			}
		})
	}
}

func TestParseLabels(t *testing.T) {
	for in, want := range map[string]map[string]string{
		"":                         nil,
		" , ":                      nil,
		"region=europe":            {"region": "europe"},
		"a=1, b=2,,flag":           {"a": "1", "b": "2", "flag": ""},
		"liqo.io/provider=kind,x=": {"liqo.io/provider": "kind", "x": ""},
	} {
		if got := ParseLabels(in); !reflect.DeepEqual(got, want) {
			t.Errorf("ParseLabels(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestNetworkingLatency: the networking module shows the round trip of the
// peer's tunnel while it is up, and none otherwise or for another peer.
func TestNetworkingLatency(t *testing.T) {
	conn := func(ns string, v netv1beta1.ConnectionStatusValue, latency string) netv1beta1.Connection {
		return netv1beta1.Connection{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gw"},
			Status: netv1beta1.ConnectionStatus{Value: v, Latency: netv1beta1.ConnectionLatency{Value: latency}}}
	}
	for _, c := range []struct {
		name  string
		conns []netv1beta1.Connection
		want  string
	}{
		{"connected", []netv1beta1.Connection{conn("liqo-tenant-milan", netv1beta1.Connected, "1.5ms")}, "1.5ms"},
		{"down", []netv1beta1.Connection{conn("liqo-tenant-milan", netv1beta1.ConnectionError, "1.5ms")}, ""},
		{"another peer's", []netv1beta1.Connection{conn("liqo-tenant-naples", netv1beta1.Connected, "3ms")}, ""},
	} {
		objs := &Objects{ForeignClusters: []corev1beta1.ForeignCluster{fc("milan", corev1beta1.ProviderRole, "Healthy", "Healthy")}, Connections: c.conns}
		if got := Build(local, objs).Peerings[0].Networking.Latency; got != c.want {
			t.Errorf("%s: latency %q, want %q", c.name, got, c.want)
		}
	}
	objs := &Objects{ForeignClusters: []corev1beta1.ForeignCluster{fc("milan", corev1beta1.ProviderRole, "Healthy", "Healthy")},
		Connections: []netv1beta1.Connection{conn("liqo-tenant-milan", netv1beta1.Connected, "1.5ms")}}
	if out := renderPeerings(Build(local, objs).Peerings, false); !strings.Contains(out, "Networking latency:") || !strings.Contains(out, "1.5ms") {
		t.Errorf("info does not show the latency:\n%s", out)
	}
}

// TestExportStates: an export's summary follows its conditions, invalid
// before conflict before ready, and one the controller has not judged yet
// is Pending.
func TestExportStates(t *testing.T) {
	cond := func(typ mcsv1beta1.ServiceExportConditionType, status metav1.ConditionStatus, reason mcsv1beta1.ServiceExportConditionReason) metav1.Condition {
		return mcsv1beta1.NewServiceExportCondition(typ, status, reason, "")
	}
	valid := cond(mcsv1beta1.ServiceExportConditionValid, metav1.ConditionTrue, mcsv1beta1.ServiceExportReasonValid)
	for _, tt := range []struct {
		name       string
		conditions []metav1.Condition
		status     string
		reason     string
	}{
		{"not judged yet", nil, statusPending, ""},
		{"valid", []metav1.Condition{valid}, ExportExported, ""},
		{"in conflict", []metav1.Condition{valid, cond(mcsv1beta1.ServiceExportConditionConflict, metav1.ConditionTrue, mcsv1beta1.ServiceExportReasonPortConflict)},
			ExportConflict, "PortConflict"},
		{"no conflict", []metav1.Condition{valid, cond(mcsv1beta1.ServiceExportConditionConflict, metav1.ConditionFalse, "NoConflicts")}, ExportExported, ""},
		{"invalid", []metav1.Condition{cond(mcsv1beta1.ServiceExportConditionValid, metav1.ConditionFalse, mcsv1beta1.ServiceExportReasonInvalidServiceType)},
			ExportInvalid, "InvalidServiceType"},
	} {
		se := mcsv1beta1.ServiceExport{}
		se.Status.Conditions = tt.conditions
		if got := exportInfo(&se); got.Status != tt.status || got.Reason != tt.reason {
			t.Errorf("%s: %s (%s), want %s (%s)", tt.name, got.Status, got.Reason, tt.status, tt.reason)
		}
	}
}
