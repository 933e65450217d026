package info

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func sampleInfo() *Info {
	return &Info{
		Local: LocalCluster{ClusterID: "rome", Labels: map[string]string{"region": "europe"}, Namespace: "liqo",
			APIServerURL: "https://127.0.0.1:6443"},
		Peerings: []Peering{{
			ClusterID: "milan", Role: "Provider",
			Authentication: ModuleInfo{Enabled: true, Status: "Healthy", Conditions: []ConditionInfo{
				{Type: "AuthIdentityControlPlaneStatus", Status: "Established", Message: "identity\nready"},
			}},
			Offloading:        ModuleInfo{Enabled: true, Status: "Healthy"},
			Networking:        ModuleInfo{Status: "Disabled"},
			APIServerURL:      "https://milan:6443",
			TenantNamespace:   TenantNamespace{Local: "liqo-tenant-milan", Remote: "liqo-tenant-rome"},
			VirtualNodes:      []VirtualNodeInfo{{Name: "milan", Ready: true}},
			ResourcesAcquired: map[string]string{"pods": "110", "cpu": "4", "memory": "8Gi"},
		}},
	}
}

const wantSummary = `┌─ Local cluster information ──────────┐
│  Cluster identity                    │
│      Cluster ID:      rome           │
│      Cluster labels:  region=europe  │
└──────────────────────────────────────┘
┌─ Active peerings ────────────────────────────────────────┐
│  milan                                                   │
│      Role:                  Provider                     │
│      Authentication status: Healthy                      │
│      Offloading status:     Healthy                      │
│      Networking status:     Disabled                     │
│      Virtual nodes:         milan (Ready)                │
│      Resources acquired:    cpu=4, memory=8Gi, pods=110  │
└──────────────────────────────────────────────────────────┘
`

const wantEmpty = `┌─ Local cluster information ─┐
│  Cluster identity           │
│      Cluster ID:      rome  │
│      Cluster labels:  none  │
└─────────────────────────────┘
┌─ Active peerings ────┐
│  No active peerings  │
└──────────────────────┘
`

func TestRenderGolden(t *testing.T) {
	if got := Render(sampleInfo(), false); got != wantSummary {
		t.Errorf("Render:\n%s\nwant:\n%s", got, wantSummary)
	}
	if got := Render(&Info{Local: LocalCluster{ClusterID: "rome"}}, false); got != wantEmpty {
		t.Errorf("Render with no peerings:\n%s\nwant:\n%s", got, wantEmpty)
	}
}

func TestRenderVerbose(t *testing.T) {
	got := Render(sampleInfo(), true)
	for _, want := range []string{
		"│      Liqo namespace:  liqo ",
		"│      API server URL:  https://127.0.0.1:6443  │",
		"│      Authentication status:   Healthy ",
		"│          AuthIdentityControlPlaneStatus: Established (identity ready)  │",
		"│      API server URL:          https://milan:6443 ",
		"│      Local tenant namespace:  liqo-tenant-milan ",
		"│      Remote tenant namespace: liqo-tenant-rome ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("verbose output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(Render(sampleInfo(), false), "AuthIdentityControlPlaneStatus") {
		t.Error("conditions shown without --verbose")
	}
}

// TestRenderAligned checks that every line of each box has the same width in
// runes, whatever the content: several peerings of every role, non-ASCII
// text, values with newlines, a title longer than the content.
func TestRenderAligned(t *testing.T) {
	many := sampleInfo()
	many.Local.ClusterID = "römé-ñ"
	many.Peerings = append(many.Peerings,
		Peering{ClusterID: "naïve", Role: "Consumer", ResourcesShared: map[string]string{"cpu": "2"},
			Offloading: ModuleInfo{Enabled: true, Status: "Unhealthy", Conditions: []ConditionInfo{{Type: "X", Status: "Error", Message: "a\tb\r\nc"}}}},
		Peering{ClusterID: "x", Role: "ConsumerAndProvider", VirtualNodes: []VirtualNodeInfo{{Name: "x", Reason: "NodeMissing"}},
			ResourceSlices: []ResourceSliceInfo{{Name: "x", Authentication: "Accepted", Resources: "Pending"}}},
		Peering{ClusterID: "u", Role: "Unknown"},
	)
	for _, info := range []*Info{sampleInfo(), many, {Local: LocalCluster{ClusterID: "a"}}} {
		for _, verbose := range []bool{false, true} {
			out := Render(info, verbose)
			width := -1
			for line := range strings.SplitSeq(strings.TrimSuffix(out, "\n"), "\n") {
				if strings.HasPrefix(line, "┌") {
					width = utf8.RuneCountInString(line)
				}
				if n := utf8.RuneCountInString(line); n != width {
					t.Errorf("line %q is %d runes wide, its box %d:\n%s", line, n, width, out)
				}
				if !strings.HasSuffix(line, "┐") && !strings.HasSuffix(line, "│") && !strings.HasSuffix(line, "┘") {
					t.Errorf("line %q does not end with a border", line)
				}
			}
		}
	}
}

func TestRenderNotReadyNode(t *testing.T) {
	info := sampleInfo()
	info.Peerings[0].VirtualNodes = []VirtualNodeInfo{{Name: "milan", Reason: "KubeletNotReady"}, {Name: "milan-2", Ready: true}}
	if got := Render(info, false); !strings.Contains(got, "Virtual nodes:         milan (NotReady: KubeletNotReady), milan-2 (Ready)") {
		t.Errorf("unexpected virtual nodes line:\n%s", got)
	}
}
