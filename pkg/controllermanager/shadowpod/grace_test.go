package shadowpod

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/test/harness"
)

// yearSeconds is the grace period of the attack in issue 30.
const yearSeconds = 365 * 24 * 3600

// TestCapGracePeriods: every period a pod can stretch its termination with
// is lowered to the cap, and nothing within it is touched.
func TestCapGracePeriods(t *testing.T) {
	sleep := func(s int64) *corev1.Lifecycle {
		return &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: s}}}
	}
	probe := func(s int64) *corev1.Probe { return &corev1.Probe{TerminationGracePeriodSeconds: ptr.To(s)} }
	tests := []struct {
		name       string
		max        int64
		spec, want corev1.PodSpec
		capped     int
	}{
		{name: "within bounds", max: 300,
			spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](60), Containers: []corev1.Container{{Name: "a", Lifecycle: sleep(50)}}},
			want: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](60), Containers: []corev1.Container{{Name: "a", Lifecycle: sleep(50)}}}},
		{name: "unset grace above the cap: the API server's 30 s stay", max: 300,
			spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}},
			want: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}}},
		{name: "unset grace below the cap", max: 10,
			spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}},
			want: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](10), Containers: []corev1.Container{{Name: "a"}}}},
		{name: "a year everywhere", max: 300, capped: 5,
			spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](yearSeconds),
				InitContainers: []corev1.Container{{Name: "side", StartupProbe: probe(yearSeconds), Lifecycle: sleep(yearSeconds)}},
				Containers:     []corev1.Container{{Name: "a", LivenessProbe: probe(yearSeconds), Lifecycle: sleep(yearSeconds)}}},
			want: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](300),
				InitContainers: []corev1.Container{{Name: "side", StartupProbe: probe(300), Lifecycle: sleep(300)}},
				Containers:     []corev1.Container{{Name: "a", LivenessProbe: probe(300), Lifecycle: sleep(300)}}}},
		{name: "no cap", max: 0,
			spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](yearSeconds)},
			want: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](yearSeconds)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := tt.spec.DeepCopy()
			capped := capGracePeriods(spec, tt.max)
			if !reflect.DeepEqual(*spec, tt.want) {
				t.Errorf("spec %+v, want %+v", *spec, tt.want)
			}
			if len(capped) != tt.capped {
				t.Errorf("reported %q, want %d fields", capped, tt.capped)
			}
		})
	}
	sp := &offv1beta1.ShadowPod{Spec: offv1beta1.ShadowPodSpec{Pod: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](yearSeconds)}}}
	if pod := ForgePod(sp, PodOptions{MaxGracePeriod: DefaultMaxGracePeriod}, nil); *pod.Spec.TerminationGracePeriodSeconds != 300 ||
		*sp.Spec.Pod.TerminationGracePeriodSeconds != yearSeconds {
		t.Errorf("ForgePod: pod grace %d, ShadowPod's %d; want 300 and the ShadowPod unchanged",
			*pod.Spec.TerminationGracePeriodSeconds, *sp.Spec.Pod.TerminationGracePeriodSeconds)
	}
}

// asConsumer returns a client acting as consumer id, allowed by RBAC to
// write ShadowPods in ns (as the provider's offloading role allows it in
// its twins).
func asConsumer(ctx context.Context, t *testing.T, id, ns string) client.Client {
	t.Helper()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "consumer", Namespace: ns}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{offv1beta1.GroupVersion.Group}, Resources: []string{"shadowpods"},
		Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}}}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "consumer", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: consts.ConsumerUser(id)}}}
	for _, o := range []client.Object{role, rb} {
		if err := cl.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	cfg := rest.CopyConfig(providerConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: consts.ConsumerUser(id), Groups: []string{consts.ConsumerGroup}}
	c, err := client.New(cfg, client.Options{Scheme: apis.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, "the consumer's RBAC", func() (bool, error) {
		return c.List(ctx, &offv1beta1.ShadowPodList{}, client.InNamespace(ns)) == nil, nil
	})
	return c
}

// TestGracePeriodCapped: a consumer offloads a pod asking to take a year to
// stop (issue 30: deleted, it would run on for that year, and its quota be
// freed at once). The provider's pod runs with the grace periods capped at
// DefaultMaxGracePeriod, the preStop sleep within it, and an Event on the
// ShadowPod says so.
func TestGracePeriodCapped(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := newNamespace(ctx, t)
	consumer := asConsumer(ctx, t, "slowpoke", ns)
	sp := newShadowPod(ns, "slow")
	sp.Spec.Pod.TerminationGracePeriodSeconds = ptr.To[int64](yearSeconds)
	c := &sp.Spec.Pod.Containers[0]
	c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: yearSeconds}}}
	c.LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}},
		TerminationGracePeriodSeconds: ptr.To[int64](yearSeconds)}
	if err := consumer.Create(ctx, sp); err != nil {
		t.Fatal(err)
	}
	capSeconds := int64(DefaultMaxGracePeriod / time.Second)
	var pod corev1.Pod
	harness.Eventually(ctx, t, "the pod made", func() (bool, error) {
		err := cl.Get(ctx, client.ObjectKeyFromObject(sp), &pod)
		return err == nil, client.IgnoreNotFound(err)
	})
	got := pod.Spec.Containers[0]
	if g := pod.Spec.TerminationGracePeriodSeconds; g == nil || *g != capSeconds {
		t.Errorf("pod terminationGracePeriodSeconds %v, want %d", ptr.Deref(g, -1), capSeconds)
	}
	if s := got.Lifecycle.PreStop.Sleep.Seconds; s != capSeconds {
		t.Errorf("preStop sleep %d, want %d", s, capSeconds)
	}
	if g := got.LivenessProbe.TerminationGracePeriodSeconds; *g != capSeconds {
		t.Errorf("liveness probe's grace %d, want %d", *g, capSeconds)
	}
	waitEvent(ctx, t, sp, corev1.EventTypeWarning, EventGracePeriodCapped)
	var events corev1.EventList
	if err := cl.List(ctx, &events, client.InNamespace(ns), client.MatchingFields{"reason": EventGracePeriodCapped}); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if !strings.Contains(e.Message, "spec.terminationGracePeriodSeconds 31536000") {
			t.Errorf("the Event does not name the grace asked for: %q", e.Message)
		}
		t.Logf("Event %s: %s", e.Reason, e.Message)
	}
}
