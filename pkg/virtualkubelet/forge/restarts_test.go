package forge

import (
	"maps"
	"net/netip"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// started is a status that started at second s with containers app and
// side restarted app and side times.
func started(s int, app, side int32) *corev1.PodStatus {
	st := &corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "app", RestartCount: app}, {Name: "side", RestartCount: side}}}
	if s > 0 {
		st.StartTime = &metav1.Time{Time: time.Unix(int64(s), 0)}
	}
	return st
}

func TestRestartBaseAnnotation(t *testing.T) {
	base := map[string]int32{"side": 2, "app": 4}
	v := FormatRestartBase(base)
	if v != "app=4,side=2" {
		t.Errorf("FormatRestartBase = %q", v)
	}
	if got := RestartBase(map[string]string{RestartBaseAnnotation: v}); !maps.Equal(got, base) {
		t.Errorf("RestartBase(%q) = %v", v, got)
	}
	// A user's edit that does not parse counts as nothing.
	if got := RestartBase(map[string]string{RestartBaseAnnotation: "app=x,=3,side=-2,ok=1,big=99999999999"}); !maps.Equal(got, map[string]int32{"ok": 1}) {
		t.Errorf("malformed entries: %v", got)
	}
	if got := RestartBase(nil); len(got) != 0 {
		t.Errorf("no annotation: %v", got)
	}
	// The local pod's bookkeeping stays local.
	local := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{RestartBaseAnnotation: v, "team": "a"}}}
	if sp := ShadowPod(local, "rome", "ns-rome", netip.Addr{}); sp.Annotations[RestartBaseAnnotation] != "" || sp.Annotations["team"] != "a" {
		t.Errorf("ShadowPod annotations %v: want the pod's own without %s", sp.Annotations, RestartBaseAnnotation)
	}
}

// TestRestartsAcrossRecreation: the local counts go on from what they
// showed, plus one, when the provider's pod is new; never down.
func TestRestartsAcrossRecreation(t *testing.T) {
	for _, tc := range []struct {
		name          string
		local, remote *corev1.PodStatus
		base          map[string]int32
		recreated     bool
	}{
		{"first reflection", &corev1.PodStatus{}, started(10, 0, 0), nil, false},
		{"same pod, a restart", started(10, 1, 0), started(10, 2, 0), nil, false},
		{"same pod after a re-creation", started(20, 5, 1), started(20, 3, 0), map[string]int32{"app": 2, "side": 1}, false},
		{"a new pod started later", started(10, 3, 0), started(20, 0, 0), nil, true},
		{"a new pod not started yet", started(10, 3, 0), started(0, 0, 0), nil, true},
		// Started within the same second as the old one: its counts tell.
		{"a new pod in the same second", started(10, 3, 0), started(10, 0, 0), nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Recreated(tc.local, tc.remote, tc.base); got != tc.recreated {
				t.Fatalf("Recreated = %v, want %v", got, tc.recreated)
			}
			base := tc.base
			if tc.recreated {
				base = NextRestartBase(tc.local, base)
			}
			got := PodStatus(tc.local, tc.remote, "", Addresses{}, base)
			for i, c := range got.ContainerStatuses {
				if shown := tc.local.ContainerStatuses; len(shown) > i && c.RestartCount < shown[i].RestartCount {
					t.Errorf("container %s: restart count down from %d to %d", c.Name, shown[i].RestartCount, c.RestartCount)
				}
				if tc.recreated && c.RestartCount != tc.local.ContainerStatuses[i].RestartCount+1 {
					t.Errorf("container %s after a re-creation: %d, want %d", c.Name, c.RestartCount, tc.local.ContainerStatuses[i].RestartCount+1)
				}
			}
		})
	}
	// Twice re-created: 3 restarts, re-created (4), 2 more restarts (6),
	// re-created again (7).
	base := NextRestartBase(started(10, 3, 0), nil)
	shown := PodStatus(started(10, 3, 0), started(20, 2, 0), "", Addresses{}, base)
	if shown.ContainerStatuses[0].RestartCount != 6 {
		t.Fatalf("after one re-creation and two restarts: %d, want 6", shown.ContainerStatuses[0].RestartCount)
	}
	if !Recreated(&shown, started(30, 0, 0), base) {
		t.Fatal("the second re-creation went unseen")
	}
	base = NextRestartBase(&shown, base)
	if got := PodStatus(&shown, started(30, 0, 0), "", Addresses{}, base); got.ContainerStatuses[0].RestartCount != 7 || got.ContainerStatuses[1].RestartCount != 2 {
		t.Errorf("after the second re-creation: %+v, want app 7 and side 2", got.ContainerStatuses)
	}
}
