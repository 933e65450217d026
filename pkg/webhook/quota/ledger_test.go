package quota

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
)

func cpuPod(cpu string) Usage {
	return UsageOf(&corev1.PodSpec{Containers: []corev1.Container{webhooktest.Container(webhooktest.List("cpu", cpu), nil)}})
}

func key(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }

func TestLedgerReserve(t *testing.T) {
	now := time.Unix(0, 0)
	var changes []string
	l := &Ledger[types.NamespacedName]{TTL: time.Minute, Now: func() time.Time { return now }, OnChange: func(c string) { changes = append(changes, c) }}
	soft := Limit{Resources: webhooktest.List("cpu", "1", "pods", "1000"), Enforcement: offv1beta1.SoftLimitsEnforcement}

	l.Observe("x", key("a"), cpuPod("400m"))
	if err := l.Reserve("x", key("b"), cpuPod("400m"), soft); err != nil {
		t.Fatalf("b within quota refused: %v", err)
	}
	// b is not stored yet, but its reservation counts.
	var exceeded *ExceededError
	if err := l.Reserve("x", key("c"), cpuPod("400m"), soft); !errors.As(err, &exceeded) {
		t.Fatalf("c over quota admitted: %v", err)
	}
	// Another consumer has its own account.
	if err := l.Reserve("y", key("c"), cpuPod("400m"), soft); err != nil {
		t.Errorf("y refused for x's usage: %v", err)
	}
	// An update replaces the key's own usage rather than adding to it.
	if err := l.Reserve("x", key("a"), cpuPod("600m"), soft); err != nil {
		t.Errorf("resizing a within quota refused: %v", err)
	}
	// Stored usage is what the informer saw.
	if got := l.Stored("x").Requests["cpu"]; got.String() != "400m" {
		t.Errorf("stored cpu = %s, want 400m", got.String())
	}
	l.Observe("x", key("b"), cpuPod("400m"))
	l.Observe("x", key("a"), cpuPod("600m"))
	if got := l.Stored("x").Requests["cpu"]; got.String() != "1" {
		t.Errorf("stored cpu = %s, want 1", got.String())
	}
	// Deleting b frees its share.
	l.Forget("x", key("b"), "", nil)
	if err := l.Reserve("x", key("c"), cpuPod("400m"), soft); err != nil {
		t.Errorf("c refused after b was deleted: %v", err)
	}
	// A reservation never stored lapses.
	if err := l.Reserve("x", key("d"), cpuPod("100m"), soft); !errors.As(err, &exceeded) {
		t.Errorf("d admitted while c's reservation holds: %v", err)
	}
	now = now.Add(2 * time.Minute)
	if err := l.Reserve("x", key("d"), cpuPod("100m"), soft); err != nil {
		t.Errorf("d refused after c's reservation lapsed: %v", err)
	}
	if want := []string{"x", "x", "x", "x"}; fmt.Sprint(changes) != fmt.Sprint(want) {
		// Observe a, b, a (resized); Forget b. Re-observing an equal usage is no change.
		t.Errorf("OnChange calls = %v, want %v", changes, want)
	}
}

// TestLedgerConcurrentReserve is the burst the ledger exists for: many
// creates at once, each alone within the quota, together not.
func TestLedgerConcurrentReserve(t *testing.T) {
	l := &Ledger[types.NamespacedName]{}
	soft := Limit{Resources: webhooktest.List("cpu", "1", "pods", "1000"), Enforcement: offv1beta1.SoftLimitsEnforcement}
	var admitted sync.Map
	var wg sync.WaitGroup
	for i := range 1000 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if l.Reserve("x", key(fmt.Sprint(i)), cpuPod("100m"), soft) == nil {
				admitted.Store(i, true)
			}
		}()
	}
	wg.Wait()
	n := 0
	admitted.Range(func(any, any) bool { n++; return true })
	if n != 10 {
		t.Errorf("%d of 1000 concurrent 100m pods admitted into 1 CPU, want 10", n)
	}
}

// TestLedgerReservationNeverLowersStored: a reservation for a stored key
// (a create under a name already taken, which the API server refuses after
// admission) counts only where it is larger than the stored usage.
func TestLedgerReservationNeverLowersStored(t *testing.T) {
	l := &Ledger[types.NamespacedName]{}
	soft := Limit{Resources: webhooktest.List("cpu", "1", "pods", "1000"), Enforcement: offv1beta1.SoftLimitsEnforcement}
	l.Observe("x", key("a"), cpuPod("1"))
	if err := l.Reserve("x", key("a"), cpuPod("1m"), soft); err != nil {
		t.Fatalf("a duplicate create of a refused by the ledger: %v", err)
	}
	var exceeded *ExceededError
	if err := l.Reserve("x", key("b"), cpuPod("500m"), soft); !errors.As(err, &exceeded) {
		t.Errorf("b admitted into the share a's refused duplicate would free: %v", err)
	}
}

// TestLedgerTotalMatchesASum: the running total the ledger keeps gives, at
// every step of random stores, updates, deletions, reservations and
// lapses, the usage a sum over every stored and reserved ShadowPod gives
// (the larger of the two for a key both stored and reserved, the key
// asked about left out).
func TestLedgerTotalMatchesASum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	now := time.Unix(0, 0)
	l := &Ledger[types.NamespacedName]{TTL: time.Minute, Now: func() time.Time { return now }}
	unbounded := Limit{Resources: webhooktest.List("cpu", "1000000", "memory", "1Ti", "pods", "1000000"), Enforcement: offv1beta1.HardLimitsEnforcement}
	amounts := []string{"0", "1m", "250m", "1", "1500m", "3", "7"}
	randomUsage := func() Usage {
		c := webhooktest.Container(webhooktest.List("cpu", amounts[rng.IntN(len(amounts))], "memory", fmt.Sprintf("%dMi", rng.IntN(4)*128)),
			webhooktest.List("cpu", amounts[rng.IntN(len(amounts))]))
		return UsageOf(&corev1.PodSpec{Containers: []corev1.Container{c}})
	}
	// reference is how the ledger summed before it kept a total.
	reference := func(a *account[types.NamespacedName], except types.NamespacedName) Usage {
		var u Usage
		for k, r := range a.reserved {
			if now.After(r.expires) || k == except {
				continue
			}
			if s, ok := a.stored[k]; ok {
				u.add(Usage{Requests: maxAmounts(r.usage.Requests, s.Requests), Limits: maxAmounts(r.usage.Limits, s.Limits)})
				continue
			}
			u.add(r.usage)
		}
		for k, s := range a.stored {
			if r, ok := a.reserved[k]; (!ok || now.After(r.expires)) && k != except {
				u.add(s)
			}
		}
		return u
	}
	for step := range 3000 {
		k := key(fmt.Sprintf("p%d", rng.IntN(40)))
		switch rng.IntN(4) {
		case 0:
			l.Observe("x", k, randomUsage())
		case 1:
			l.Forget("x", k, "", nil)
		case 2:
			if err := l.Reserve("x", k, randomUsage(), unbounded); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
		case 3:
			now = now.Add(time.Duration(rng.IntN(40)) * time.Second)
		}
		except := key(fmt.Sprintf("p%d", rng.IntN(40)))
		a := l.account("x")
		want := reference(a, except)
		got := a.usage(except, now)
		if !equalAmounts(got.Requests, want.Requests) || !equalAmounts(got.Limits, want.Limits) {
			t.Fatalf("step %d, usage without %s: %v, a sum gives %v", step, except.Name, got, want)
		}
		var stored Usage
		for _, s := range a.stored {
			stored.add(s)
		}
		if got := l.Stored("x"); !equalAmounts(got.Requests, stored.Requests) || !equalAmounts(got.Limits, stored.Limits) {
			t.Fatalf("step %d: stored %v, a sum gives %v", step, got, stored)
		}
	}
}

// TestLedgerLingering: a ShadowPod deleted while its pod still terminates
// keeps its share (against new ShadowPods, of its name too, and in the
// stored usage the Quota's status shows) until its pod is gone; one whose
// pod is already gone frees it at once.
func TestLedgerLingering(t *testing.T) {
	l := &Ledger[types.NamespacedName]{}
	soft := Limit{Resources: webhooktest.List("cpu", "1", "pods", "1000"), Enforcement: offv1beta1.SoftLimitsEnforcement}
	var exceeded *ExceededError

	l.Observe("x", key("a"), cpuPod("600m"))
	l.Forget("x", key("a"), "uid-a", func() bool { return true })
	if got := l.Stored("x").Requests["cpu"]; got.String() != "600m" {
		t.Errorf("stored cpu with a's pod terminating = %s, want 600m", got.String())
	}
	if err := l.Reserve("x", key("b"), cpuPod("600m"), soft); !errors.As(err, &exceeded) {
		t.Errorf("b admitted while a's pod terminates: %v", err)
	}
	if err := l.Reserve("x", key("a"), cpuPod("600m"), soft); !errors.As(err, &exceeded) {
		t.Errorf("a new a admitted while the old a's pod terminates: %v", err)
	}
	l.Release("other-uid")
	if got := l.Stored("x").Requests["cpu"]; got.String() != "600m" {
		t.Errorf("stored cpu after another pod went = %s, want 600m", got.String())
	}
	l.Release("uid-a")
	if got := l.Stored("x").Requests["cpu"]; !got.IsZero() {
		t.Errorf("stored cpu once a's pod is gone = %s, want 0", got.String())
	}
	if err := l.Reserve("x", key("b"), cpuPod("600m"), soft); err != nil {
		t.Errorf("b refused once a's pod is gone: %v", err)
	}
	l.Release("uid-a") // a second delete event changes nothing
	if got := l.Stored("x").Requests["cpu"]; !got.IsZero() {
		t.Errorf("stored cpu after a repeated release = %s, want 0", got.String())
	}

	l.Observe("x", key("c"), cpuPod("300m"))
	l.Forget("x", key("c"), "uid-c", func() bool { return false })
	if got := l.Stored("x").Requests["cpu"]; !got.IsZero() {
		t.Errorf("stored cpu after c went with its pod = %s, want 0", got.String())
	}
}
