package peering

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
)

// TestSeedLinesOnClusters runs the v0.5 manual's command lines that need
// Liqo running (pkg/liqoctl's TestSeedLinesParse parses them all), with
// the manual's contexts being the clusters' names here: liqoctl status
// with $KUBECONFIG and with --kubeconfig, and liqoctl --context=provider
// peer consumer / unpeer consumer, which name the remote cluster by its
// cluster ID (a context of the kubeconfig) instead of a remote kubeconfig.
func TestSeedLinesOnClusters(t *testing.T) {
	const consumer, provider = "naples", "milan"
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	rules := &clientcmd.ClientConfigLoadingRules{Precedence: []string{kubeconfigs["rome"], kubeconfigs[consumer], kubeconfigs[provider]}}
	merged, err := rules.Load()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "config")
	if err := clientcmd.WriteToFile(*merged, path); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", path)
	liqo := func(args ...string) string {
		t.Helper()
		out, err := run(ctx, args...)
		if err != nil {
			t.Fatalf("liqoctl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}

	t.Run("liqoctl status", func(t *testing.T) {
		// $KUBECONFIG's current context is rome's.
		if out := liqo("status"); !strings.Contains(out, "region=south-europe") {
			t.Errorf("liqoctl status does not show rome's cluster labels:\n%s", out)
		}
		if out := liqo("--kubeconfig", kubeconfigs[consumer], "status"); !strings.Contains(out, "region=south-italy") {
			t.Errorf("liqoctl --kubeconfig $KUBECONFIG_NAPLES status does not show naples' cluster labels:\n%s", out)
		}
	})

	node := func() error {
		return clusterClient(t, consumer).Get(ctx, types.NamespacedName{Name: provider}, &corev1.Node{})
	}
	t.Run("liqoctl --context=provider peer consumer", func(t *testing.T) {
		waitNodesReady(ctx, t, provider)
		// Here naples consumes milan; --networking-disabled as every
		// peering of this package.
		out := liqo("--context="+consumer, "peer", provider, "--networking-disabled")
		if !strings.Contains(out, "INFO: Virtual node "+provider+" is Ready") {
			t.Errorf("peer %s did not end with its virtual node Ready:\n%s", provider, out)
		}
		if err := node(); err != nil {
			t.Errorf("no virtual node %s on %s: %v", provider, consumer, err)
		}
	})
	t.Run("a NAME that is not the remote cluster", func(t *testing.T) {
		out, err := run(ctx, "--context="+consumer, "peer", provider, "--remote-context", "rome", "--networking-disabled")
		if err == nil || !strings.Contains(err.Error(), `the remote cluster is "rome", not "milan"`) {
			t.Errorf("peer milan --remote-context rome: %v\n%s", err, out)
		}
		out, err = run(ctx, "--context="+consumer, "peer", "florence")
		if err == nil || !strings.Contains(err.Error(), `the kubeconfig has no context "florence"`) {
			t.Errorf("peer florence: %v\n%s", err, out)
		}
		out, err = run(ctx, "--context="+consumer, "unpeer", "florence")
		if err == nil || !strings.Contains(err.Error(), "liqoctl force unpeer florence") {
			t.Errorf("unpeer florence: %v\n%s", err, out)
		}
	})
	t.Run("liqoctl --context=provider unpeer consumer", func(t *testing.T) {
		liqo("--context="+consumer, "unpeer", provider)
		if err := node(); !apierrors.IsNotFound(err) {
			t.Errorf("virtual node %s on %s after unpeer: %v", provider, consumer, err)
		}
	})
}
