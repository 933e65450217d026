package virtualkubelet

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-go/liqo/pkg/consts"
)

func TestBuildNode(t *testing.T) {
	started := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	flipped := started.Add(time.Minute)
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("4"),
		corev1.ResourceMemory: resource.MustParse("8Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	gpu := corev1.Taint{Key: "example.com/gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	base := NodeConfig{Name: "liqo-milan", RemoteClusterID: "milan", Capacity: capacity}
	mandatory := map[string]string{
		consts.TypeLabel:                       consts.TypeVirtualNode,
		consts.RemoteClusterIDLabel:            "milan",
		"kubernetes.io/hostname":               "liqo-milan",
		"kubernetes.io/os":                     "linux",
		"kubernetes.io/arch":                   "amd64",
		"node-role.kubernetes.io/virtual-node": "",
	}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range mandatory {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}

	tests := []struct {
		name       string
		cfg        func(NodeConfig) NodeConfig
		state      remoteState
		labels     map[string]string
		taints     []corev1.Taint
		ready      corev1.ConditionStatus
		reason     string
		message    string
		transition time.Time
		// addresses and port are the published kubelet endpoint.
		addresses []corev1.NodeAddress
		port      int32
	}{
		{
			name:       "reachable, no extras",
			state:      remoteState{ready: true, since: flipped, version: "v1.34.4"},
			labels:     mandatory,
			taints:     []corev1.Taint{virtualNodeTaint},
			ready:      corev1.ConditionTrue,
			reason:     ReasonRemoteReachable,
			message:    "the remote cluster's API server is ready",
			transition: flipped,
		},
		{
			name: "unreachable keeps the probe's message",
			state: remoteState{ready: false, since: flipped, version: "v1.34.4",
				message: "the remote cluster's API server is not ready: connection refused"},
			labels:     mandatory,
			taints:     []corev1.Taint{virtualNodeTaint},
			ready:      corev1.ConditionFalse,
			reason:     ReasonRemoteUnreachable,
			message:    "the remote cluster's API server is not ready: connection refused",
			transition: flipped,
		},
		{
			name: "unreachable within the grace stays Ready, its network unavailable",
			state: remoteState{ready: false, graced: true, since: flipped, readySince: started,
				message: "the remote cluster's API server is not ready: connection refused"},
			labels:     mandatory,
			taints:     []corev1.Taint{virtualNodeTaint},
			ready:      corev1.ConditionTrue,
			reason:     ReasonUnreachableInGrace,
			message:    "the remote cluster is unreachable since " + flipped.UTC().Format(time.RFC3339) + ": its pods are kept; the node turns NotReady at the end of the grace (--provider-unreachable-grace)",
			transition: started,
		},
		{
			name:       "unreachable without a message gets a default one",
			state:      remoteState{since: started},
			labels:     mandatory,
			taints:     []corev1.Taint{virtualNodeTaint},
			ready:      corev1.ConditionFalse,
			reason:     ReasonRemoteUnreachable,
			message:    "the remote cluster's API server is not reachable or not ready",
			transition: started,
		},
		{
			name: "extra labels and taints are added, the runner's labels win",
			cfg: func(c NodeConfig) NodeConfig {
				c.Labels = map[string]string{"topology.kubernetes.io/region": "eu", consts.TypeLabel: "other", "kubernetes.io/os": "windows"}
				c.Taints = []corev1.Taint{gpu}
				return c
			},
			state:      remoteState{ready: true, since: flipped},
			labels:     with(map[string]string{"topology.kubernetes.io/region": "eu"}),
			taints:     []corev1.Taint{virtualNodeTaint, gpu},
			ready:      corev1.ConditionTrue,
			reason:     ReasonRemoteReachable,
			message:    "the remote cluster's API server is ready",
			transition: flipped,
		},
		{
			name: "a configured virtual-node taint is replaced, one with another effect kept",
			cfg: func(c NodeConfig) NodeConfig {
				c.Taints = []corev1.Taint{
					{Key: consts.VirtualNodeTaintKey, Value: "false", Effect: corev1.TaintEffectNoExecute},
					{Key: consts.VirtualNodeTaintKey, Value: "true", Effect: corev1.TaintEffectNoSchedule},
				}
				return c
			},
			state:  remoteState{ready: true, since: flipped},
			labels: mandatory,
			taints: []corev1.Taint{virtualNodeTaint,
				{Key: consts.VirtualNodeTaintKey, Value: "true", Effect: corev1.TaintEffectNoSchedule}},
			ready:      corev1.ConditionTrue,
			reason:     ReasonRemoteReachable,
			message:    "the remote cluster's API server is ready",
			transition: flipped,
		},
		{
			name: "the kubelet API endpoint is published",
			cfg: func(c NodeConfig) NodeConfig {
				c.Address, c.Port = "127.0.0.1", 43125
				return c
			},
			state:      remoteState{ready: true, since: flipped},
			labels:     mandatory,
			taints:     []corev1.Taint{virtualNodeTaint},
			ready:      corev1.ConditionTrue,
			reason:     ReasonRemoteReachable,
			message:    "the remote cluster's API server is ready",
			transition: flipped,
			addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}},
			port:       43125,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base
			if tc.cfg != nil {
				cfg = tc.cfg(cfg)
			}
			n := buildNode(cfg, tc.state, started)
			if n.Name != "liqo-milan" {
				t.Errorf("name %q", n.Name)
			}
			if !equality.Semantic.DeepEqual(n.Labels, tc.labels) {
				t.Errorf("labels\n got %v\nwant %v", n.Labels, tc.labels)
			}
			if !equality.Semantic.DeepEqual(n.Spec.Taints, tc.taints) {
				t.Errorf("taints\n got %v\nwant %v", n.Spec.Taints, tc.taints)
			}
			if !equality.Semantic.DeepEqual(n.Status.Capacity, capacity) || !equality.Semantic.DeepEqual(n.Status.Allocatable, capacity) {
				t.Errorf("capacity %v allocatable %v, want both %v", n.Status.Capacity, n.Status.Allocatable, capacity)
			}
			conds := map[corev1.NodeConditionType]corev1.NodeCondition{}
			for _, c := range n.Status.Conditions {
				conds[c.Type] = c
			}
			if len(conds) != 5 {
				t.Errorf("%d conditions, want 5: %v", len(conds), n.Status.Conditions)
			}
			r := conds[corev1.NodeReady]
			if r.Status != tc.ready || r.Reason != tc.reason || r.Message != tc.message || !r.LastTransitionTime.Time.Equal(tc.transition) {
				t.Errorf("Ready condition %+v, want %s/%s/%q at %s", r, tc.ready, tc.reason, tc.message, tc.transition)
			}
			for _, ct := range []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure} {
				c, ok := conds[ct]
				if !ok || c.Status != corev1.ConditionFalse || c.Reason == "" || !c.LastTransitionTime.Time.Equal(started) {
					t.Errorf("condition %s = %+v, want False since %s", ct, c, started)
				}
			}
			// The network is the remote cluster's: unavailable (which
			// taints the node NoSchedule) while it is unreachable.
			wantNet := corev1.ConditionFalse
			if !tc.state.ready {
				wantNet = corev1.ConditionTrue
			}
			if c := conds[corev1.NodeNetworkUnavailable]; c.Status != wantNet || c.Reason == "" || !c.LastTransitionTime.Time.Equal(tc.state.since) {
				t.Errorf("condition NetworkUnavailable = %+v, want %s since %s", c, wantNet, tc.state.since)
			}
			info := n.Status.NodeInfo
			if info.KubeletVersion != tc.state.version || info.OperatingSystem != "linux" || info.Architecture != "amd64" {
				t.Errorf("node info %+v", info)
			}
			if !equality.Semantic.DeepEqual(n.Status.Addresses, tc.addresses) {
				t.Errorf("addresses %v, want %v", n.Status.Addresses, tc.addresses)
			}
			if n.Status.DaemonEndpoints.KubeletEndpoint.Port != tc.port {
				t.Errorf("kubelet port %d, want %d", n.Status.DaemonEndpoints.KubeletEndpoint.Port, tc.port)
			}
		})
	}
}

// TestBuildNodeDoesNotAlias: the Node must own its maps and slices, since
// the node controller keeps and mutates what it is given.
func TestBuildNodeDoesNotAlias(t *testing.T) {
	cfg := NodeConfig{
		Name: "n", RemoteClusterID: "r",
		Labels:   map[string]string{"a": "1"},
		Taints:   []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}},
		Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
	}
	n := buildNode(cfg, remoteState{}, time.Now())
	n.Labels["a"] = "2"
	n.Spec.Taints[1].Key = "changed"
	n.Status.Capacity[corev1.ResourceCPU] = resource.MustParse("9")
	if cfg.Labels["a"] != "1" || cfg.Taints[0].Key != "k" || cfg.Capacity.Cpu().String() != "1" {
		t.Errorf("buildNode shares state with its config: %+v", cfg)
	}
}

func TestAdoptNode(t *testing.T) {
	vn := virtualNodeTaint
	gpu := corev1.Taint{Key: "example.com/gpu", Effect: corev1.TaintEffectNoSchedule}
	notReady := corev1.Taint{Key: "node.kubernetes.io/not-ready", Effect: corev1.TaintEffectNoExecute, TimeAdded: &metav1.Time{Time: time.Unix(1, 0)}}
	cordon := corev1.Taint{Key: "node.kubernetes.io/unschedulable", Effect: corev1.TaintEffectNoSchedule}
	node := func(labels map[string]string, taints ...corev1.Taint) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
	}

	tests := []struct {
		name       string
		existing   *corev1.Node
		want       *corev1.Node
		changed    bool
		wantLabels map[string]string
		wantTaints []corev1.Taint
	}{
		{
			name:       "identical",
			existing:   node(map[string]string{"a": "1"}, vn),
			want:       node(map[string]string{"a": "1"}, vn),
			wantLabels: map[string]string{"a": "1"},
			wantTaints: []corev1.Taint{vn},
		},
		{
			name:       "wanted labels win, foreign labels stay",
			existing:   node(map[string]string{"a": "0", "user": "x"}, vn),
			want:       node(map[string]string{"a": "1", "b": "2"}, vn),
			changed:    true,
			wantLabels: map[string]string{"a": "1", "b": "2", "user": "x"},
			wantTaints: []corev1.Taint{vn},
		},
		{
			name:       "no labels at all",
			existing:   node(nil),
			want:       node(map[string]string{"a": "1"}, vn),
			changed:    true,
			wantLabels: map[string]string{"a": "1"},
			wantTaints: []corev1.Taint{vn},
		},
		{
			name:       "stale taints go, the control plane's stay",
			existing:   node(nil, gpu, notReady, cordon),
			want:       node(nil, vn),
			changed:    true,
			wantLabels: map[string]string{},
			wantTaints: []corev1.Taint{vn, notReady, cordon},
		},
		{
			name:       "order and TimeAdded are not changes",
			existing:   node(nil, notReady, vn, gpu),
			want:       node(nil, vn, gpu),
			wantLabels: map[string]string{},
			wantTaints: []corev1.Taint{notReady, vn, gpu},
		},
		{
			name:       "a wanted taint overrides the control plane's with the same key and effect",
			existing:   node(nil, vn, cordon),
			want:       node(nil, vn, corev1.Taint{Key: cordon.Key, Value: "v", Effect: cordon.Effect}),
			changed:    true,
			wantLabels: map[string]string{},
			wantTaints: []corev1.Taint{vn, {Key: cordon.Key, Value: "v", Effect: cordon.Effect}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.existing.DeepCopy()
			got, changed := adoptNode(tc.existing, tc.want)
			if changed != tc.changed {
				t.Errorf("changed = %v, want %v", changed, tc.changed)
			}
			if !equality.Semantic.DeepEqual(got.Labels, tc.wantLabels) {
				t.Errorf("labels %v, want %v", got.Labels, tc.wantLabels)
			}
			if !equality.Semantic.DeepEqual(got.Spec.Taints, tc.wantTaints) {
				t.Errorf("taints %v, want %v", got.Spec.Taints, tc.wantTaints)
			}
			if !equality.Semantic.DeepEqual(before, tc.existing) {
				t.Errorf("adoptNode modified its input")
			}
		})
	}
}

func TestIsOtherNode(t *testing.T) {
	tests := []struct {
		name   string
		labels map[string]string
		other  bool
	}{
		{"a real node", map[string]string{"kubernetes.io/hostname": "n"}, true},
		{"our virtual node", map[string]string{consts.TypeLabel: consts.TypeVirtualNode, consts.RemoteClusterIDLabel: "milan"}, false},
		{"a virtual node without cluster ID", map[string]string{consts.TypeLabel: consts.TypeVirtualNode}, false},
		{"another peering's virtual node", map[string]string{consts.TypeLabel: consts.TypeVirtualNode, consts.RemoteClusterIDLabel: "rome"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: tc.labels}}
			if got := isOtherNode(n, "milan"); got != tc.other {
				t.Errorf("isOtherNode = %v, want %v", got, tc.other)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	tests := []struct {
		name    string
		cfg     NodeConfig
		err     string
		seconds int32
		renew   time.Duration
	}{
		{name: "defaults", cfg: NodeConfig{Name: "n", RemoteClusterID: "r"}, seconds: 40, renew: 10 * time.Second},
		{name: "sub-second lease rounds up", cfg: NodeConfig{Name: "n", RemoteClusterID: "r", LeaseDuration: 4500 * time.Millisecond}, seconds: 5, renew: 1125 * time.Millisecond},
		{name: "no name", cfg: NodeConfig{RemoteClusterID: "r"}, err: "node name is empty"},
		{name: "no cluster ID", cfg: NodeConfig{Name: "n"}, err: "remote cluster ID is empty"},
		{name: "negative interval", cfg: NodeConfig{Name: "n", RemoteClusterID: "r", HealthCheckInterval: -time.Second}, err: "negative health check interval"},
		{name: "tiny lease", cfg: NodeConfig{Name: "n", RemoteClusterID: "r", LeaseDuration: time.Millisecond}, err: "shorter than a second"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := tc.cfg.withDefaults()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.HealthCheckInterval != DefaultHealthCheckInterval || cfg.HealthCheckTimeout != DefaultHealthCheckTimeout || cfg.StatusUpdateInterval != DefaultStatusUpdateInterval {
				t.Errorf("defaults not applied: %+v", cfg)
			}
			seconds, renew := cfg.leaseTiming()
			if seconds != tc.seconds || renew != tc.renew {
				t.Errorf("lease timing %ds/%s, want %ds/%s", seconds, renew, tc.seconds, tc.renew)
			}
		})
	}
}

// TestRecordCoalesces: only flips and a newly known version are changes, so
// a steady state writes nothing between status resyncs.
func TestRecordCoalesces(t *testing.T) {
	p := newProvider(NodeConfig{Name: "n", RemoteClusterID: "r"}, nil, discardLogger())
	pending := func() bool {
		select {
		case <-p.changed:
			return true
		default:
			return false
		}
	}
	t0 := time.Now()
	down := errors.New("connection refused")
	steps := []struct {
		err     error
		version string
		change  bool
	}{
		{down, "", true},        // the first outcome always counts
		{down, "", false},       // still down
		{nil, "v1.34.4", true},  // recovered
		{nil, "", false},        // still up
		{nil, "v1.34.4", false}, // same version again
		{nil, "v1.35.0", true},  // upgraded
		{errors.New("x"), "", true},
	}
	for i, s := range steps {
		p.record(s.err, s.version, t0.Add(time.Duration(i)*time.Second))
		if got := pending(); got != s.change {
			t.Errorf("step %d: change = %v, want %v", i, got, s.change)
		}
	}
	if p.state.ready || p.state.version != "v1.35.0" || !p.state.since.Equal(t0.Add(6*time.Second)) {
		t.Errorf("final state %+v", p.state)
	}
	long := strings.Repeat("é", 400)
	p.record(nil, "", t0)
	p.record(errors.New(long), "", t0)
	if m := p.state.message; len(m) > maxMessage || !utf8.ValidString(m) || !strings.HasSuffix(m, "...") {
		t.Errorf("message not truncated cleanly: %d bytes, valid %v", len(m), utf8.ValidString(m))
	}
}
