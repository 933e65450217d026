package slices

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

func rl(cpu, mem, pods string) corev1.ResourceList {
	l := corev1.ResourceList{}
	if cpu != "" {
		l[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		l[corev1.ResourceMemory] = resource.MustParse(mem)
	}
	if pods != "" {
		l[corev1.ResourcePods] = resource.MustParse(pods)
	}
	return l
}

func node(name string, ready bool, virtual bool, alloc corev1.ResourceList) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	if virtual {
		n.Labels[consts.TypeLabel] = consts.TypeVirtualNode
	}
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}}
	n.Status.Allocatable = alloc
	return n
}

func TestShareable(t *testing.T) {
	nodes := []corev1.Node{
		node("a", true, false, rl("8", "32Gi", "110")),
		node("b", true, false, rl("8", "32Gi", "110")),
		node("down", false, false, rl("8", "32Gi", "110")),
		node("virtual", true, true, rl("100", "100Gi", "1000")),
	}
	cases := []struct {
		name    string
		pct     int
		granted []corev1.ResourceList
		want    corev1.ResourceList
	}{
		{"half of the ready physical nodes", 50, nil, rl("8", "32Gi", "110")},
		{"all of them", 100, nil, rl("16", "64Gi", "220")},
		{"odd share rounds down", 33, nil, rl("5280m", "22677427322", "72")},
		{"less what others got", 50, []corev1.ResourceList{rl("3", "8Gi", "10")}, rl("5", "24Gi", "100")},
		{"never negative", 50, []corev1.ResourceList{rl("20", "", "")}, rl("0", "32Gi", "110")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Shareable(nodes, c.pct, c.granted)
			if authv1beta1.CanonicalResources(got) != authv1beta1.CanonicalResources(c.want) {
				t.Fatalf("got %s, want %s", authv1beta1.CanonicalResources(got), authv1beta1.CanonicalResources(c.want))
			}
		})
	}
}

func TestDecide(t *testing.T) {
	left := rl("8", "32Gi", "110")
	cases := []struct {
		name      string
		requested corev1.ResourceList
		deny      bool
		wantOK    bool
		want      corev1.ResourceList
		msgHas    string
	}{
		{"fits", rl("4", "8Gi", "110"), false, true, rl("4", "8Gi", "110"), "all requested"},
		{"clamped", rl("16", "8Gi", "110"), false, true, rl("8", "8Gi", "110"), "cpu: requested 16, 8 left"},
		{"denied", rl("16", "8Gi", "110"), true, false, nil, "not enough resources: cpu: requested 16, 8 left"},
		{"fits under deny", rl("8", "32Gi", "1"), true, true, rl("8", "32Gi", "1"), "all requested"},
		// cpu, memory and pods, not named, are asked for at their defaults.
		{"unknown resource clamped to zero", corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}, false, true,
			corev1.ResourceList{"cpu": resource.MustParse("4"), "memory": resource.MustParse("8Gi"), "pods": resource.MustParse("110"),
				"nvidia.com/gpu": resource.Quantity{}}, "nvidia.com/gpu: requested 1, 0 left"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok, msg := Decide(c.requested, left, c.deny)
			if ok != c.wantOK || authv1beta1.CanonicalResources(got) != authv1beta1.CanonicalResources(c.want) || !strings.Contains(msg, c.msgHas) {
				t.Fatalf("got %s ok=%v %q; want %s ok=%v containing %q", authv1beta1.CanonicalResources(got), ok, msg, authv1beta1.CanonicalResources(c.want), c.wantOK, c.msgHas)
			}
		})
	}
}

// TestDecideRefusesNegative: a negative request is invalid, whatever the
// policy; granting it would store a negative Quota, and a negative grant
// would add to what the provider thinks it has left for others.
func TestDecideRefusesNegative(t *testing.T) {
	left := rl("8", "32Gi", "110")
	for _, deny := range []bool{false, true} {
		for _, requested := range []corev1.ResourceList{
			rl("-1000", "8Gi", "110"),
			rl("4", "8Gi", "-1"),
			{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourcePods: resource.MustParse("1"),
				"nvidia.com/gpu": resource.MustParse("-2")},
		} {
			got, ok, msg := Decide(requested, left, deny)
			if ok || got != nil || !strings.Contains(msg, "must not be negative") {
				t.Errorf("deny=%v, %s: got %s ok=%v %q; want a refusal saying it must not be negative", deny, authv1beta1.CanonicalResources(requested), authv1beta1.CanonicalResources(got), ok, msg)
			}
		}
	}
}

// TestNegativeGrantInflatesNothing is the probe of issue 15: a slice asking
// for -1000 CPUs, then one asking for 1000, from a provider sharing 4 of its
// 8 CPUs.
func TestNegativeGrantInflatesNothing(t *testing.T) {
	nodes := []corev1.Node{node("a", true, false, rl("8", "32Gi", "110"))}
	first, _, _ := Decide(rl("-1000", "1Gi", "10"), Shareable(nodes, 50, nil), false)
	var granted []corev1.ResourceList
	if first != nil {
		granted = append(granted, first)
	}
	second, ok, msg := Decide(rl("1000", "1Gi", "10"), Shareable(nodes, 50, granted), false)
	if cpu := second[corev1.ResourceCPU]; !ok || cpu.Cmp(resource.MustParse("4")) > 0 {
		t.Errorf("after a grant of %s, a request for 1000 CPUs got %s (%q); the provider shares 4", authv1beta1.CanonicalResources(first), authv1beta1.CanonicalResources(second), msg)
	}
	// Whatever was stored before the policy refused negative requests adds
	// nothing to the share either.
	if got := Shareable(nodes, 50, []corev1.ResourceList{rl("-1000", "-1Gi", "")}); authv1beta1.CanonicalResources(got) != authv1beta1.CanonicalResources(rl("4", "16Gi", "55")) {
		t.Errorf("Shareable with a negative grant = %s, want %s", authv1beta1.CanonicalResources(got), authv1beta1.CanonicalResources(rl("4", "16Gi", "55")))
	}
}

// TestDecideBoundsCPUMemoryPods: a slice naming only some of cpu, memory
// and pods asks for the default amount of the others, so its Quota bounds
// all three rather than leaving what it did not name unbounded.
func TestDecideBoundsCPUMemoryPods(t *testing.T) {
	cases := []struct {
		name      string
		requested corev1.ResourceList
		left      corev1.ResourceList
		deny      bool
		wantOK    bool
		want      corev1.ResourceList
		msgHas    string
	}{
		{"only pods", rl("", "", "10"), rl("8", "32Gi", "110"), false, true, rl("4", "8Gi", "10"), "all requested"},
		{"only cpu", rl("2", "", ""), rl("8", "32Gi", "110"), false, true, rl("2", "8Gi", "110"), "all requested"},
		{"only pods, little left", rl("", "", "10"), rl("1", "1Gi", "110"), false, true, rl("1", "1Gi", "10"),
			"cpu: requested 4 (the default: the slice names no cpu), 1 left"},
		{"only pods, little left, Deny", rl("", "", "10"), rl("1", "1Gi", "110"), true, false, nil,
			"not enough resources: cpu: requested 4 (the default: the slice names no cpu), 1 left"},
		{"only an extended resource", corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")},
			corev1.ResourceList{"cpu": resource.MustParse("8"), "memory": resource.MustParse("32Gi"), "pods": resource.MustParse("110"), "nvidia.com/gpu": resource.MustParse("2")},
			false, true, corev1.ResourceList{"cpu": resource.MustParse("4"), "memory": resource.MustParse("8Gi"), "pods": resource.MustParse("110"), "nvidia.com/gpu": resource.MustParse("1")},
			"all requested"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok, msg := Decide(c.requested, c.left, c.deny)
			if ok != c.wantOK || authv1beta1.CanonicalResources(got) != authv1beta1.CanonicalResources(c.want) || !strings.Contains(msg, c.msgHas) {
				t.Fatalf("got %s ok=%v %q; want %s ok=%v containing %q", authv1beta1.CanonicalResources(got), ok, msg, authv1beta1.CanonicalResources(c.want), c.wantOK, c.msgHas)
			}
		})
	}
}

// TestDecideEphemeralStorage: a default slice asks for 20Gi of ephemeral
// storage, which a provider whose nodes report it grants within what it
// shares (never more), and a provider whose nodes report none leaves out
// rather than refusing the whole slice for.
func TestDecideEphemeralStorage(t *testing.T) {
	withDisk := func(disk string) corev1.ResourceList {
		l := rl("8", "32Gi", "110")
		l[corev1.ResourceEphemeralStorage] = resource.MustParse(disk)
		return l
	}
	defaults := rl("4", "8Gi", "110")
	defaultsWith := func(disk string) corev1.ResourceList {
		l := defaults.DeepCopy()
		l[corev1.ResourceEphemeralStorage] = resource.MustParse(disk)
		return l
	}
	named := func(disk string) corev1.ResourceList {
		l := corev1.ResourceList{}
		l[corev1.ResourceEphemeralStorage] = resource.MustParse(disk)
		return l
	}
	cases := []struct {
		name      string
		requested corev1.ResourceList
		left      corev1.ResourceList
		deny      bool
		wantOK    bool
		want      corev1.ResourceList
		msgHas    string
	}{
		{"the default granted", nil, withDisk("50Gi"), false, true, defaultsWith("20Gi"), "all requested resources granted"},
		{"the default bounded by the share", nil, withDisk("5Gi"), false, true, defaultsWith("5Gi"),
			"ephemeral-storage: requested 20Gi (the default: the slice names no ephemeral-storage), 5Gi left"},
		{"the default over the share, Deny", nil, withDisk("5Gi"), true, false, nil, "ephemeral-storage: requested 20Gi"},
		{"named", named("40Gi"), withDisk("50Gi"), false, true, defaultsWith("40Gi"), "all requested"},
		{"nodes report none: left out", nil, rl("8", "32Gi", "110"), true, true, defaults,
			"none of the default ephemeral-storage: this cluster's nodes report none"},
		{"nodes report none, named: zero", named("1Gi"), rl("8", "32Gi", "110"), false, true, defaultsWith("0"),
			"ephemeral-storage: requested 1Gi, 0 left"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok, msg := Decide(c.requested, c.left, c.deny)
			if ok != c.wantOK || authv1beta1.CanonicalResources(got) != authv1beta1.CanonicalResources(c.want) || !strings.Contains(msg, c.msgHas) {
				t.Fatalf("got %s ok=%v %q; want %s ok=%v containing %q", authv1beta1.CanonicalResources(got), ok, msg, authv1beta1.CanonicalResources(c.want), c.wantOK, c.msgHas)
			}
		})
	}
}
