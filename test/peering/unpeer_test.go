package peering

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/test/harness"
)

// TestUnpeerKeepsNamespaces: unpeer, by default, keeps the tenant namespaces
// on both sides but leaves nothing of the peering in them: no virtual node,
// no network fabric (here the Configurations of liqoctl network init), no
// ForeignCluster and so no peer in liqoctl info, on either side. A peer of
// the same clusters afterwards works on the kept namespaces; unpeer
// --delete-namespaces then deletes them too.
func TestUnpeerKeepsNamespaces(t *testing.T) {
	const consumer, provider = "milan", "naples"
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	pair := []string{"--kubeconfig", kubeconfigs[consumer], "--remote-kubeconfig", kubeconfigs[provider]}
	liqo := func(args ...string) string {
		t.Helper()
		out, err := run(ctx, args...)
		if err != nil {
			t.Fatalf("liqoctl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	sides := []struct {
		cl        client.Client
		name, ns  string
		otherName string
	}{
		{clusterClient(t, consumer), consumer, consts.TenantNamespace(provider), provider},
		{clusterClient(t, provider), provider, consts.TenantNamespace(consumer), consumer},
	}
	peerGone := func(what string) {
		t.Helper()
		for _, s := range sides {
			harness.Eventually(ctx, t, "no ForeignCluster of "+s.otherName+" on "+s.name+" "+what, func() (bool, error) {
				err := s.cl.Get(ctx, client.ObjectKey{Name: s.otherName}, &corev1beta1.ForeignCluster{})
				return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
			})
		}
		if out, err := run(ctx, "info", "peer", provider, "--kubeconfig", kubeconfigs[consumer]); err == nil || !strings.Contains(err.Error(), "no peering with "+provider) {
			t.Errorf("liqoctl info peer %s on %s %s: %v\n%s", provider, consumer, what, err, out)
		}
	}

	// The reverse peering would keep the namespaces as they are (the
	// fabric is shared): an earlier test's (naples consuming milan) is
	// undone for this one and made again after it.
	if err := sides[1].cl.Get(ctx, client.ObjectKey{Namespace: sides[1].ns, Name: consts.IdentityName(consumer)}, &authv1beta1.Identity{}); err == nil {
		liqo("unpeer", "--kubeconfig", kubeconfigs[provider], "--remote-kubeconfig", kubeconfigs[consumer])
		t.Cleanup(func() { peer(t, provider, consumer) })
	}

	peer(t, consumer, provider, "--cpu", "1", "--memory", "1Gi", "--pods", "10")
	liqo(append([]string{"network", "init", "--timeout", "1m"}, pair...)...)
	for _, s := range sides {
		if err := s.cl.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: s.otherName}, &netv1beta1.Configuration{}); err != nil {
			t.Fatalf("network init made no Configuration on %s: %v", s.name, err)
		}
	}

	out := liqo(append([]string{"unpeer"}, pair...)...)
	t.Logf("unpeer:\n%s", out)
	if !strings.Contains(out, "kept, holding no peering") {
		t.Errorf("unpeer does not say the namespaces are kept:\n%s", out)
	}
	for _, s := range sides {
		var ns corev1.Namespace
		if err := s.cl.Get(ctx, client.ObjectKey{Name: s.ns}, &ns); err != nil || !ns.DeletionTimestamp.IsZero() {
			t.Errorf("tenant namespace %s on %s after unpeer: %v, deleting %v; want it kept", s.ns, s.name, err, !ns.DeletionTimestamp.IsZero())
		}
		if err := s.cl.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: s.otherName}, &netv1beta1.Configuration{}); !apierrors.IsNotFound(err) {
			t.Errorf("the Configuration on %s after unpeer: %v", s.name, err)
		}
	}
	if err := sides[0].cl.Get(ctx, client.ObjectKey{Name: provider}, &corev1.Node{}); !apierrors.IsNotFound(err) {
		t.Errorf("virtual node %s on %s after unpeer: %v", provider, consumer, err)
	}
	peerGone("after unpeer")

	// Again, on the kept namespaces.
	peer(t, consumer, provider, "--cpu", "1", "--memory", "1Gi", "--pods", "10")
	if err := sides[0].cl.Get(ctx, client.ObjectKey{Name: provider}, &corev1beta1.ForeignCluster{}); err != nil {
		t.Errorf("no ForeignCluster of %s after peering again: %v", provider, err)
	}

	out = liqo(append([]string{"unpeer", "--delete-namespaces"}, pair...)...)
	t.Logf("unpeer --delete-namespaces:\n%s", out)
	for _, s := range sides {
		if err := s.cl.Get(ctx, client.ObjectKey{Name: s.ns}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
			t.Errorf("tenant namespace %s on %s after unpeer --delete-namespaces: %v", s.ns, s.name, err)
		}
	}
	peerGone("after unpeer --delete-namespaces")
}
