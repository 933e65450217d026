package slices

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
)

// setCordoned sets the spec.cordoned of the Quota of slice key, as liqoctl
// cordon|uncordon resourceslice does.
func setCordoned(t *testing.T, key client.ObjectKey, cordoned bool) {
	t.Helper()
	ctx := context.Background()
	var q offv1beta1.Quota
	if err := cl.Get(ctx, key, &q); err != nil {
		t.Fatal(err)
	}
	q.Spec.Cordoned = ptr.To(cordoned)
	if err := cl.Update(ctx, &q); err != nil {
		t.Fatal(err)
	}
}

// TestCordonedSliceKeepsGrant: a cordoned slice says so in its Resources
// condition (still Accepted: its pods keep the grant), a bigger request on
// it waits with the grant and the Quota kept as they were (cordon and all:
// the Quota's update must not lift it), and once uncordoned the request is
// decided and the condition says the grant is open again.
func TestCordonedSliceKeepsGrant(t *testing.T) {
	ctx := context.Background()
	waitNodeReady(t)

	// Its own consumer, and its slice deleted at the end: the tests share
	// the cluster, and a grant left behind would be taken from the shares
	// the other tests expect.
	tenant(t, "cordoned")
	s := replica("cordoned", rl("1", "1Gi", "10"))
	if err := cl.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The Quota too: the garbage collector would delete it, later.
		quota := &offv1beta1.Quota{}
		quota.Namespace, quota.Name = s.Namespace, s.Name
		for _, o := range []client.Object{s, quota} {
			if err := cl.Delete(context.Background(), o); client.IgnoreNotFound(err) != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
	})
	if got := decideSlice(t, s); !accepted(got) {
		t.Fatalf("the first request: %v", got.Status.Conditions)
	}
	key := client.ObjectKeyFromObject(s)
	setCordoned(t, key, true)
	got := decideSlice(t, s)
	if c := resourcesCondition(got); !accepted(got) || c.Reason != ReasonSliceCordoned || !strings.Contains(c.Message, "spec.cordoned") {
		t.Errorf("a cordoned slice's condition: %+v, want Accepted, reason %s naming spec.cordoned", c, ReasonSliceCordoned)
	}

	got.Spec.Resources = rl("1", "1Gi", "20")
	if err := cl.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	got = decideSlice(t, s)
	if c := resourcesCondition(got); !got.Status.Resources.Pods().Equal(resource.MustParse("10")) ||
		c.Reason != ReasonSliceCordoned || !strings.Contains(c.Message, "the changed request waits") {
		t.Errorf("a cordoned slice's bigger request: %s, %+v; want 10 pods kept and the condition saying the request waits", authv1beta1.CanonicalResources(got.Status.Resources), c)
	}
	var q offv1beta1.Quota
	if err := cl.Get(ctx, key, &q); err != nil || !q.Spec.Resources.Pods().Equal(resource.MustParse("10")) || !ptr.Deref(q.Spec.Cordoned, false) {
		t.Errorf("the cordoned slice's Quota = %+v (%v), want 10 pods and still cordoned", q.Spec, err)
	}

	setCordoned(t, key, false)
	got = decideSlice(t, s)
	if !got.Status.Resources.Pods().Equal(resource.MustParse("20")) {
		t.Errorf("the request once uncordoned: %s, want 20 pods", authv1beta1.CanonicalResources(got.Status.Resources))
	}
	if c := resourcesCondition(got); c.Reason == ReasonSliceCordoned {
		t.Errorf("an uncordoned slice's condition: %+v", c)
	}
}
