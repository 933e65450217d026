package replicator

import (
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/remotecluster"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
)

// sliceKind replicates consumer rome's ResourceSlices as they are.
func sliceKind() Kind[*authv1beta1.ResourceSlice] {
	return Kind[*authv1beta1.ResourceSlice]{
		Name:    "ResourceSlice",
		New:     func() *authv1beta1.ResourceSlice { return &authv1beta1.ResourceSlice{} },
		NewList: func() client.ObjectList { return &authv1beta1.ResourceSliceList{} },
		Mine: func(s *authv1beta1.ResourceSlice) bool {
			return s.Labels[consts.ReplicationLabel] == "" && s.Spec.ConsumerClusterID != nil && *s.Spec.ConsumerClusterID == "rome"
		},
		Forge:      func(local *authv1beta1.ResourceSlice) *authv1beta1.ResourceSlice { return &authv1beta1.ResourceSlice{} },
		SyncSpec:   func(_, _ *authv1beta1.ResourceSlice) bool { return false },
		SyncStatus: func(_, _ *authv1beta1.ResourceSlice) bool { return false },
	}
}

// TestUnpeerForgetsTheProvider unpeers as liqoctl does, the replicated
// objects first and the Identity last: once the Identity is gone nothing
// asks the registry for that provider again, so only the Identity's deletion
// can stop its watches (they leaked for every unpeered provider before).
func TestUnpeerForgetsTheProvider(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	local, remote := consts.TenantNamespace("milan"), consts.TenantNamespace("rome")
	for _, ns := range []string{local, remote} {
		if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kc", Namespace: local},
		Data: map[string][]byte{consts.KubeconfigKey: data}}); err != nil {
		t.Fatal(err)
	}
	id := &authv1beta1.Identity{ObjectMeta: metav1.ObjectMeta{Name: consts.IdentityName("milan"), Namespace: local},
		Spec: authv1beta1.IdentitySpec{Namespace: ptr.To(remote)}}
	if err := cl.Create(ctx, id); err != nil {
		t.Fatal(err)
	}
	id.Status.KubeconfigSecretRef = &corev1.LocalObjectReference{Name: "kc"}
	if err := cl.Status().Update(ctx, id); err != nil {
		t.Fatal(err)
	}

	mgr, err := testbed.NewManager(cluster.Config, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	remotes := remotecluster.NewRegistry(mgr.GetAPIReader(), remotecluster.Options{Scheme: mgr.GetScheme()})
	r := &Reconciler[*authv1beta1.ResourceSlice]{Client: mgr.GetClient(), ClusterID: "rome", Kind: sliceKind(), Remotes: remotes}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	mctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = mgr.Start(mctx) }()

	consumer := corev1beta1.ClusterID("rome")
	slice := &authv1beta1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "milan", Namespace: local},
		Spec: authv1beta1.ResourceSliceSpec{ConsumerClusterID: &consumer}}
	if err := cl.Create(ctx, slice); err != nil {
		t.Fatal(err)
	}
	replica := types.NamespacedName{Namespace: remote, Name: "milan"}
	harness.Eventually(ctx, t, "the replica on the provider", func() (bool, error) {
		return cl.Get(ctx, replica, &authv1beta1.ResourceSlice{}) == nil, nil
	})
	if n := r.watches.Len(); n != 1 {
		t.Fatalf("%d providers watched while peered, want 1", n)
	}
	c, err := remotes.Get(ctx, "milan")
	if err != nil {
		t.Fatal(err)
	}
	if n := c.Caches(); n != 1 {
		t.Fatalf("%d namespace caches on the provider while peered, want 1 (the tenant namespace's)", n)
	}

	if err := cl.Delete(ctx, slice); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, "the replica deleted", func() (bool, error) {
		err := cl.Get(ctx, replica, &authv1beta1.ResourceSlice{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	if err := cl.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, "the provider forgotten once its Identity is gone", func() (bool, error) {
		return r.watches.Len() == 0 && remotes.Len() == 0 && c.Caches() == 0 && c.IsStale(), nil
	})
}
