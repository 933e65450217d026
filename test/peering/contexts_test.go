package peering

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// TestKubeconfigContexts reaches two clusters through the contexts of one
// kubeconfig, as kubectl users keep them: --context A --remote-context B,
// with the kubeconfig given by --kubeconfig or by a $KUBECONFIG list of
// files, and no --remote-kubeconfig.
func TestKubeconfigContexts(t *testing.T) {
	const consumer, provider = "milan", "naples"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// One file with a context per cluster, the current one rome's.
	rules := &clientcmd.ClientConfigLoadingRules{Precedence: []string{kubeconfigs["rome"], kubeconfigs[consumer], kubeconfigs[provider]}}
	merged, err := rules.Load()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "config")
	if err := clientcmd.WriteToFile(*merged, path); err != nil {
		t.Fatal(err)
	}
	liqo := func(args ...string) string {
		t.Helper()
		out, err := run(ctx, args...)
		if err != nil {
			t.Fatalf("liqoctl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	tenant := func() error {
		return clusterClient(t, provider).Get(ctx, types.NamespacedName{Namespace: consts.TenantNamespace(consumer), Name: consumer}, &authv1beta1.Tenant{})
	}

	t.Run("info --context", func(t *testing.T) {
		if out := liqo("info", "--kubeconfig", path, "--context", consumer, "--get", "local.clusterID"); strings.TrimSpace(out) != consumer {
			t.Errorf("info --context %s --get local.clusterID printed %q", consumer, out)
		}
	})
	t.Run("authenticate --context --remote-context", func(t *testing.T) {
		out := liqo("authenticate", "--kubeconfig", path, "--context", consumer, "--remote-context", provider)
		if !strings.Contains(out, `Local cluster "`+consumer+`" and remote cluster "`+provider+`" found`) {
			t.Errorf("authenticate did not reach %s and %s:\n%s", consumer, provider, out)
		}
		if err := tenant(); err != nil {
			t.Errorf("no Tenant of %s on %s after authenticate: %v", consumer, provider, err)
		}
	})
	t.Run("completion reads the clusters", func(t *testing.T) {
		cases := []struct {
			args []string
			want string
		}{
			{[]string{"info", "--kubeconfig", path, "--context", ""}, provider},
			{[]string{"info", "peer", "--kubeconfig", path, "--context", consumer, ""}, provider},
			{[]string{"force", "unpeer", "--kubeconfig", path, "--context", consumer, ""}, provider},
			{[]string{"cordon", "tenant", "--kubeconfig", path, "--context", provider, ""}, consumer},
			{[]string{"generate", "identity", "--kubeconfig", path, "--context", provider, "--remote-cluster-id", ""}, consumer},
			{[]string{"offload", "namespace", "--kubeconfig", path, "--context", consumer, ""}, "kube-system"},
			{[]string{"info", "--kubeconfig", path, "--context", consumer, "-n", "li"}, consts.DefaultNamespace},
		}
		for _, c := range cases {
			out := liqo(append([]string{cobra.ShellCompRequestCmd}, c.args...)...)
			if !strings.Contains("\n"+out, "\n"+c.want+"\t") && !strings.Contains("\n"+out, "\n"+c.want+"\n") {
				t.Errorf("liqoctl %s<Tab> does not offer %s:\n%s", strings.Join(c.args, " "), c.want, out)
			}
		}
	})
	t.Run("unauthenticate with $KUBECONFIG", func(t *testing.T) {
		t.Setenv("KUBECONFIG", strings.Join(rules.Precedence, string(filepath.ListSeparator)))
		liqo("unauthenticate", "--context", consumer, "--remote-context", provider)
		if err := tenant(); !apierrors.IsNotFound(err) {
			t.Errorf("Tenant of %s on %s after unauthenticate: %v", consumer, provider, err)
		}
	})
}
