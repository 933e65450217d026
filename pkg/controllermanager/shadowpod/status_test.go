package shadowpod

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/kit"
)

func podWith(phase corev1.PodPhase, ready *corev1.PodCondition) *corev1.Pod {
	p := &corev1.Pod{Status: corev1.PodStatus{Phase: phase}}
	if ready != nil {
		p.Status.Conditions = []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
			*ready,
		}
	}
	return p
}

func TestMirrorPod(t *testing.T) {
	now := metav1.Now()
	terminating := podWith(corev1.PodRunning, &corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
	terminating.DeletionTimestamp = &now
	tests := []struct {
		name       string
		pod        *corev1.Pod
		wantPhase  corev1.PodPhase
		wantStatus metav1.ConditionStatus
		wantReason string
	}{
		{"no phase yet", podWith("", nil), corev1.PodPending, metav1.ConditionFalse, ReasonPodNotReady},
		{"pending", podWith(corev1.PodPending, nil), corev1.PodPending, metav1.ConditionFalse, ReasonPodNotReady},
		{"running and ready", podWith(corev1.PodRunning,
			&corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue}),
			corev1.PodRunning, metav1.ConditionTrue, ReasonPodReady},
		{"running, not ready, kubelet reason", podWith(corev1.PodRunning,
			&corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [c]"}),
			corev1.PodRunning, metav1.ConditionFalse, "ContainersNotReady"},
		{"a reason the condition API refuses", podWith(corev1.PodRunning,
			&corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "not a reason!"}),
			corev1.PodRunning, metav1.ConditionFalse, ReasonPodNotReady},
		{"succeeded", podWith(corev1.PodSucceeded,
			&corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "PodCompleted"}),
			corev1.PodSucceeded, metav1.ConditionFalse, "PodCompleted"},
		{"terminating", terminating, corev1.PodRunning, metav1.ConditionFalse, ReasonTerminating},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var st offv1beta1.ShadowPodStatus
			mirrorPod(&st, tt.pod)
			if st.Phase != tt.wantPhase {
				t.Errorf("phase = %q, want %q", st.Phase, tt.wantPhase)
			}
			if len(st.Conditions) != 1 {
				t.Fatalf("conditions = %+v, want only Ready", st.Conditions)
			}
			c := st.Conditions[0]
			if c.Type != ConditionReady || c.Status != tt.wantStatus || c.Reason != tt.wantReason || c.LastTransitionTime.IsZero() {
				t.Errorf("condition = %+v, want Ready %s %s with a transition time", c, tt.wantStatus, tt.wantReason)
			}
			if podExisted(&st) != true {
				t.Errorf("a mirrored pod does not count as existed")
			}
		})
	}
}

// TestMirrorPodStable checks that mirroring an unchanged Pod again changes
// nothing, transition time included: that is what spares status writes.
func TestMirrorPodStable(t *testing.T) {
	pod := podWith(corev1.PodRunning, &corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
	var st offv1beta1.ShadowPodStatus
	mirrorPod(&st, pod)
	old := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	st.Conditions[0].LastTransitionTime = old
	before := *st.DeepCopy()
	mirrorPod(&st, pod)
	if !meta.IsStatusConditionTrue(st.Conditions, ConditionReady) || !st.Conditions[0].LastTransitionTime.Equal(&old) ||
		st.Phase != before.Phase || len(st.Conditions) != 1 {
		t.Errorf("status changed on an unchanged pod: %+v, was %+v", st, before)
	}
	// A new status moves the transition time; a new message alone does not.
	pod.Status.Conditions[1] = corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Message: "m1"}
	mirrorPod(&st, pod)
	if st.Conditions[0].LastTransitionTime.Equal(&old) {
		t.Errorf("transition time kept on a change of status")
	}
	moved := st.Conditions[0].LastTransitionTime
	pod.Status.Conditions[1].Message = "m2"
	mirrorPod(&st, pod)
	if !st.Conditions[0].LastTransitionTime.Equal(&moved) || st.Conditions[0].Message != "m2" {
		t.Errorf("condition = %+v, want message m2 and the same transition time", st.Conditions[0])
	}
}

func TestPodExisted(t *testing.T) {
	tests := []struct {
		reason string // "" for no condition
		want   bool
	}{
		{"", false},
		{ReasonNameConflict, false},
		{ReasonCreationFailed, false},
		{ReasonRecreationFailed, true},
		{ReasonTerminating, true},
		{ReasonPodReady, true},
		{ReasonPodNotReady, true},
		{"ContainersNotReady", true},
	}
	for _, tt := range tests {
		var st offv1beta1.ShadowPodStatus
		if tt.reason != "" {
			notRunning(&st, tt.reason, "m")
		}
		if got := podExisted(&st); got != tt.want {
			t.Errorf("podExisted with reason %q = %v, want %v", tt.reason, got, tt.want)
		}
	}
}

func TestNotRunning(t *testing.T) {
	var st offv1beta1.ShadowPodStatus
	mirrorPod(&st, podWith(corev1.PodRunning, &corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue}))
	notRunning(&st, ReasonNameConflict, string(make([]byte, 40000)))
	c := meta.FindStatusCondition(st.Conditions, ConditionReady)
	if st.Phase != corev1.PodPending || c == nil || c.Status != metav1.ConditionFalse || c.Reason != ReasonNameConflict {
		t.Errorf("status = %+v, want Pending and Ready False NameConflict", st)
	}
	if len(c.Message) > kit.MaxConditionMessage {
		t.Errorf("message of %d bytes kept, the API takes %d", len(c.Message), kit.MaxConditionMessage)
	}
}

func TestPodChanged(t *testing.T) {
	base := func() *corev1.Pod {
		p := podWith(corev1.PodRunning, &corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue,
			LastProbeTime: metav1.Now()})
		p.Labels = map[string]string{"app": "web"}
		return p
	}
	now := metav1.Now()
	tests := []struct {
		name   string
		change func(*corev1.Pod)
		want   bool
	}{
		{"nothing", func(*corev1.Pod) {}, false},
		{"pod IP", func(p *corev1.Pod) { p.Status.PodIP = "10.0.0.1" }, false},
		{"node name", func(p *corev1.Pod) { p.Spec.NodeName = "n" }, false},
		{"probe time", func(p *corev1.Pod) {
			p.Status.Conditions[1].LastProbeTime = metav1.NewTime(time.Now().Add(time.Minute))
		}, false},
		{"another label", func(p *corev1.Pod) { p.Labels["app"] = "db" }, false},
		{"phase", func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }, true},
		{"ready status", func(p *corev1.Pod) { p.Status.Conditions[1].Status = corev1.ConditionFalse }, true},
		{"ready message", func(p *corev1.Pod) { p.Status.Conditions[1].Message = "x" }, true},
		{"deletion", func(p *corev1.Pod) { p.DeletionTimestamp = &now }, true},
		{"shadowpod label", func(p *corev1.Pod) { p.Labels[ShadowPodLabel] = "x" }, true},
		{"controller", func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: "ShadowPod", Name: "x", UID: "u", Controller: ptr.To(true)}}
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, cur := base(), base()
			cur.Status.Conditions[1].LastProbeTime = old.Status.Conditions[1].LastProbeTime
			tt.change(cur)
			if got := podChanged.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: cur}); got != tt.want {
				t.Errorf("podChanged = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestShadowPodChanged(t *testing.T) {
	base := func() *offv1beta1.ShadowPod {
		sp := &offv1beta1.ShadowPod{ObjectMeta: metav1.ObjectMeta{Name: "a", Generation: 1, Labels: map[string]string{"app": "web"}}}
		mirrorPod(&sp.Status, podWith(corev1.PodRunning, &corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue}))
		return sp
	}
	now := metav1.Now()
	tests := []struct {
		name   string
		change func(*offv1beta1.ShadowPod)
		want   bool
	}{
		{"nothing but the resource version", func(sp *offv1beta1.ShadowPod) { sp.ResourceVersion = "2" }, false},
		{"a label", func(sp *offv1beta1.ShadowPod) { sp.Labels["app"] = "db" }, false},
		{"an annotation", func(sp *offv1beta1.ShadowPod) { sp.Annotations = map[string]string{"a": "b"} }, false},
		{"the spec", func(sp *offv1beta1.ShadowPod) { sp.Generation = 2 }, true},
		{"the deletion", func(sp *offv1beta1.ShadowPod) { sp.DeletionTimestamp = &now }, true},
		{"the phase", func(sp *offv1beta1.ShadowPod) { sp.Status.Phase = corev1.PodFailed }, true},
		{"the condition", func(sp *offv1beta1.ShadowPod) { sp.Status.Conditions[0].Message = "x" }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, cur := base(), base()
			cur.Status.Conditions[0].LastTransitionTime = old.Status.Conditions[0].LastTransitionTime
			tt.change(cur)
			if got := shadowPodChanged.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: cur}); got != tt.want {
				t.Errorf("shadowPodChanged = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSettling(t *testing.T) {
	now := time.Now()
	created := metav1.NewTime(now.Add(-500 * time.Millisecond))
	young := func(phase corev1.PodPhase, conds ...corev1.PodCondition) *corev1.Pod {
		p := &corev1.Pod{Status: corev1.PodStatus{Phase: phase, Conditions: conds}}
		p.CreationTimestamp = created
		return p
	}
	old := young(corev1.PodPending)
	old.CreationTimestamp = metav1.NewTime(now.Add(-SettleTime))
	deleting := young(corev1.PodPending)
	deleting.DeletionTimestamp = &created
	written := &offv1beta1.ShadowPod{}
	setReady(&written.Status, metav1.ConditionFalse, ReasonPodNotReady, "pending")
	tests := []struct {
		name string
		sp   *offv1beta1.ShadowPod
		pod  *corev1.Pod
		wait bool
	}{
		{"new and pending: wait", &offv1beta1.ShadowPod{}, young(corev1.PodPending), true},
		{"no phase yet: wait", &offv1beta1.ShadowPod{}, young(""), true},
		{"scheduled, still pending: wait", &offv1beta1.ShadowPod{}, young(corev1.PodPending, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}), true},
		{"running: now", &offv1beta1.ShadowPod{}, young(corev1.PodRunning), false},
		{"failed: now", &offv1beta1.ShadowPod{}, young(corev1.PodFailed), false},
		{"unschedulable: now", &offv1beta1.ShadowPod{}, young(corev1.PodPending, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable"}), false},
		{"pending past the settle time: now", &offv1beta1.ShadowPod{}, old, false},
		{"being deleted: now", &offv1beta1.ShadowPod{}, deleting, false},
		{"status written before: now", written, young(corev1.PodPending), false},
	}
	for _, tc := range tests {
		got := settling(tc.sp, tc.pod, now)
		if (got > 0) != tc.wait || got > SettleTime {
			t.Errorf("%s: settling = %s, want deferred %v (at most %s)", tc.name, got, tc.wait, SettleTime)
		}
	}
}
