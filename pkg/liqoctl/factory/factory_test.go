package factory

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// twoContexts is a kubeconfig with a context for each of two clusters.
const twoContexts = `apiVersion: v1
kind: Config
current-context: rome
clusters:
- name: rome
  cluster: {server: "https://rome.example:6443"}
- name: milan
  cluster: {server: "https://milan.example:6443"}
users:
- name: admin
  user: {token: "admin-token"}
contexts:
- name: rome
  context: {cluster: rome, user: admin}
- name: milan
  context: {cluster: milan, user: admin}
`

// bind returns the local and remote clusters of a command whose flags are
// args, as AddLocalFlags and AddRemoteFlags bind them.
func bind(t *testing.T, args ...string) (local, remote *Cluster) {
	t.Helper()
	local, remote = &Cluster{}, &Cluster{}
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	local.AddLocalFlags(fs)
	remote.AddRemoteFlags(fs, local)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return local, remote
}

// TestRemoteContext: --remote-context names a context of the local
// cluster's kubeconfig, given by --kubeconfig or $KUBECONFIG, and the
// other connection flags and their --remote- twins override it.
func TestRemoteContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte(twoContexts), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name                  string
		env                   string
		args                  []string
		wantLocal, wantRemote string
		wantToken             string
	}{
		{"--kubeconfig", "", []string{"--kubeconfig", path, "--remote-context", "milan"}, "https://rome.example:6443", "https://milan.example:6443", "admin-token"},
		{"$KUBECONFIG", path, []string{"--context", "milan", "--remote-context", "rome"}, "https://milan.example:6443", "https://rome.example:6443", "admin-token"},
		{"--remote-server", path, []string{"--remote-server", "https://naples.example:6443", "--remote-token", "t"}, "https://rome.example:6443", "https://naples.example:6443", "t"},
		{"--remote-kubeconfig", "", []string{"--kubeconfig", path, "--remote-kubeconfig", path, "--remote-context", "milan", "--server", "https://local.example"},
			"https://local.example", "https://milan.example:6443", "admin-token"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", c.env)
			local, remote := bind(t, c.args...)
			l, err := local.restConfig()
			if err != nil {
				t.Fatal(err)
			}
			r, err := remote.restConfig()
			if err != nil {
				t.Fatal(err)
			}
			if l.Host != c.wantLocal || r.Host != c.wantRemote || r.BearerToken != c.wantToken {
				t.Errorf("local %s, remote %s with token %q; want %s, %s with %q", l.Host, r.Host, r.BearerToken, c.wantLocal, c.wantRemote, c.wantToken)
			}
		})
	}
}

// TestNoRemote: a remote cluster no flag names is refused, not taken to be
// the local kubeconfig's current context.
func TestNoRemote(t *testing.T) {
	_, remote := bind(t, "--kubeconfig", "/nonexistent")
	if _, err := remote.restConfig(); !errors.Is(err, ErrNoRemote) {
		t.Fatalf("got %v, want ErrNoRemote", err)
	}
}

// TestNoKubeconfig: with no kubeconfig anywhere, the error says how to give
// one instead of reaching kubectl's fallback http://localhost:8080.
func TestNoKubeconfig(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	local, _ := bind(t)
	want := "pass --kubeconfig FILE or set $KUBECONFIG"
	if _, err := local.restConfig(); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want an error saying %q", err, want)
	}
}

// TestLiqoNamespaceAlias: --liqo-namespace (and --remote-liqo-namespace)
// set the namespace where Liqo runs, as --namespace does; both given
// different values are refused, the same value accepted.
func TestLiqoNamespaceAlias(t *testing.T) {
	local, remote := bind(t, "--liqo-namespace", "a", "--remote-liqo-namespace", "b")
	if local.Namespace != "a" || remote.Namespace != "b" {
		t.Errorf("namespaces %q, %q", local.Namespace, remote.Namespace)
	}
	local, _ = bind(t, "-n", "a", "--liqo-namespace", "a")
	if local.Namespace != "a" {
		t.Errorf("-n a --liqo-namespace a: %q", local.Namespace)
	}
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	(&Cluster{}).AddLocalFlags(fs)
	if err := fs.Parse([]string{"-n", "a", "--liqo-namespace", "b"}); err == nil || !strings.Contains(err.Error(), "both name the namespace where Liqo runs") {
		t.Errorf("-n a --liqo-namespace b: %v", err)
	}
	if l, _ := bind(t); l.Namespace != "liqo" {
		t.Errorf("default %q", l.Namespace)
	}
}

// TestTenantNamespaceFlag: on a command about one peer, -n liqo-tenant-<ID>
// names the peer's tenant namespace, as in Liqo's liqoctl, and gives the
// peer's ID; naming another peer's than --remote-cluster-id is refused. On
// other commands a tenant namespace is refused as where Liqo runs.
func TestTenantNamespaceFlag(t *testing.T) {
	parse := func(peer bool, args ...string) (*Cluster, error) {
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		c := &Cluster{}
		if peer {
			c.AddPeerFlags(fs)
		} else {
			c.AddLocalFlags(fs)
		}
		return c, fs.Parse(args)
	}
	c, err := parse(true, "-n", "liqo-tenant-milan", "--liqo-namespace", "liqo-system")
	if err != nil || c.TenantNamespace != "liqo-tenant-milan" || c.Namespace != "liqo-system" {
		t.Fatalf("-n liqo-tenant-milan --liqo-namespace liqo-system: %v, tenant %q, Liqo in %q", err, c.TenantNamespace, c.Namespace)
	}
	if id, err := c.PeerID(""); err != nil || id != "milan" {
		t.Errorf("PeerID without --remote-cluster-id: %q, %v", id, err)
	}
	if id, err := c.PeerID("milan"); err != nil || id != "milan" {
		t.Errorf("PeerID(milan): %q, %v", id, err)
	}
	if _, err := c.PeerID("naples"); err == nil || !strings.Contains(err.Error(), "not of --remote-cluster-id") {
		t.Errorf("-n liqo-tenant-milan --remote-cluster-id naples: %v", err)
	}
	c, err = parse(true, "-n", "liqo-system")
	if err != nil || c.TenantNamespace != "" || c.Namespace != "liqo-system" {
		t.Errorf("-n liqo-system on a peer command: %v, tenant %q, Liqo in %q", err, c.TenantNamespace, c.Namespace)
	}
	for _, args := range [][]string{{"-n", "liqo-tenant-milan"}, {"--liqo-namespace", "liqo-tenant-milan"}} {
		if _, err := parse(false, args...); err == nil || !strings.Contains(err.Error(), "is a tenant namespace") {
			t.Errorf("%v on a command about no peer: %v", args, err)
		}
	}
	if _, err := parse(true, "--liqo-namespace", "liqo-tenant-milan"); err == nil {
		t.Error("--liqo-namespace liqo-tenant-milan accepted")
	}
}
