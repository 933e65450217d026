package fuzz

import (
	"encoding/json"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/liqo-go/liqo/pkg/controllermanager/slices"
	"github.com/liqo-go/liqo/pkg/webhook/quota"
)

// FuzzUsageOf: whatever the pod spec (its quantities included, which a
// peer chooses), its usage counts one pod, never limits below requests,
// never a negative amount for non-negative inputs, and leaves the spec as
// it was.
func FuzzUsageOf(f *testing.F) {
	for _, s := range append(podSeeds,
		`{"containers":[{"name":"a","resources":{"limits":{"cpu":"2"}}}],"resources":{"limits":{"memory":"1Gi"}}}`,
		`{"initContainers":[{"name":"i","resources":{"requests":{"cpu":"4"}}}],"containers":[{"name":"a","resources":{"requests":{"cpu":"1","memory":"64Mi"}}}],"overhead":{"cpu":"100m"}}`,
		`{"containers":[{"name":"a","resources":{"requests":{"cpu":"-64"}}}]}`) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, ok := podSpec(t, data)
		if !ok {
			return
		}
		before := spec.DeepCopy()
		u := quota.UsageOf(&spec)
		if p := u.Requests[corev1.ResourcePods]; p.Value() != 1 {
			t.Fatalf("pods counted %s", p.String())
		}
		negativeInput := hasNegative(&spec)
		for name, req := range u.Requests {
			if name == corev1.ResourcePods {
				continue
			}
			if lim, ok := u.Limits[name]; !ok || lim.Cmp(req) < 0 {
				t.Fatalf("%s: limit %v below request %s", name, u.Limits[name], req.String())
			}
			if !negativeInput && req.Sign() < 0 {
				t.Fatalf("%s: negative request %s from non-negative amounts", name, req.String())
			}
		}
		if !reflect.DeepEqual(&spec, before) {
			t.Fatal("the spec was modified")
		}
	})
}

func hasNegative(spec *corev1.PodSpec) bool {
	lists := []corev1.ResourceList{spec.Overhead}
	if spec.Resources != nil {
		lists = append(lists, spec.Resources.Requests, spec.Resources.Limits)
	}
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for _, c := range cs {
			lists = append(lists, c.Resources.Requests, c.Resources.Limits)
		}
	}
	for _, l := range lists {
		for _, q := range l {
			if q.Sign() < 0 {
				return true
			}
		}
	}
	return false
}

// FuzzSlicePolicy: whatever a consumer's ResourceSlice asks for, the
// policy grants no negative amount, never more than is left to share, and
// always bounds cpu, memory and pods; a request with a negative amount is
// refused.
func FuzzSlicePolicy(f *testing.F) {
	f.Add([]byte(`{"cpu":"2","memory":"4Gi"}`), []byte(`{"cpu":"4","memory":"8Gi","pods":"110"}`), false)
	f.Add([]byte(`{"pods":"10"}`), []byte(`{"cpu":"1","memory":"1Gi","pods":"5"}`), true)
	f.Add([]byte(`{"cpu":"-1000"}`), []byte(`{"cpu":"8"}`), false)
	f.Add([]byte(`{"nvidia.com/gpu":"1","cpu":"100m"}`), []byte(`{}`), false)
	f.Fuzz(func(t *testing.T, reqData, shareData []byte, deny bool) {
		var requested, shareable corev1.ResourceList
		if json.Unmarshal(reqData, &requested) != nil || json.Unmarshal(shareData, &shareable) != nil {
			return
		}
		for _, q := range shareable {
			if q.Sign() < 0 {
				return // Shareable never returns a negative amount
			}
		}
		accepted, ok, msg := slices.Decide(requested, shareable, deny)
		if err := slices.Validate(requested); err != nil {
			if ok {
				t.Fatalf("an invalid request (%v) was granted %v", err, accepted)
			}
			return
		}
		if !ok {
			if !deny {
				t.Fatalf("refused without Deny: %s", msg)
			}
			return
		}
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods} {
			if _, ok := accepted[name]; !ok {
				t.Fatalf("the grant %v leaves %s unbounded", accepted, name)
			}
		}
		for name, q := range accepted {
			have := shareable[name]
			if q.Sign() < 0 || q.Cmp(have) > 0 {
				t.Fatalf("%s: granted %s with %s left", name, q.String(), have.String())
			}
			if want, named := requested[name]; named && q.Cmp(want) > 0 {
				t.Fatalf("%s: granted %s, more than the %s asked", name, q.String(), want.String())
			}
		}
	})
}
