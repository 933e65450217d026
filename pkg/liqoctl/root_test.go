package liqoctl

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestUsageErrorsExitTwo: an unknown command, a wrong argument count and
// flags that exclude each other exit with ExitUsage and point to --help (TestCommandTable checks the
// flags of every command).
func TestUsageErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{{"no-such-command"}, {"offload", "namespace"}, {"offload", "namespace", "a", "b"},
		{"export", "service"}, {"install", "--configure-dns", "--only-output-values"}} {
		var out, errOut bytes.Buffer
		if code := Run(context.Background(), args, &out, &errOut); code != ExitUsage || !strings.Contains(errOut.String(), "--help") {
			t.Errorf("liqoctl %s: exit %d, stderr %q: want %d and a pointer to --help", strings.Join(args, " "), code, errOut.String(), ExitUsage)
		}
	}
}

// TestMissingKubeconfig: with no kubeconfig anywhere, the error says how to
// give one, and it is a failure, not a usage error.
func TestMissingKubeconfig(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	var out, errOut bytes.Buffer
	code := Run(context.Background(), []string{"info"}, &out, &errOut)
	if code != ExitFailure || !strings.Contains(errOut.String(), "pass --kubeconfig FILE or set $KUBECONFIG") {
		t.Errorf("exit %d, stderr %q: want %d and how to give a kubeconfig", code, errOut.String(), ExitFailure)
	}
}

// TestRemoteRequired: a command taking a remote cluster, given none, is used
// wrongly, and says which flags name one.
func TestRemoteRequired(t *testing.T) {
	for _, args := range [][]string{{"peer"}, {"unpeer"}, {"authenticate"}, {"network", "connect"}, {"peer", "in-band"}} {
		var out, errOut bytes.Buffer
		code := Run(context.Background(), append(args, "--context", "rome"), &out, &errOut)
		if code != ExitUsage || !strings.Contains(errOut.String(), "remote-kubeconfig remote-context remote-server") {
			t.Errorf("liqoctl %s: exit %d, stderr %q: want %d and the remote flags named", strings.Join(args, " "), code, errOut.String(), ExitUsage)
		}
	}
}

// TestGlobalFlags: the reference's global flags are accepted on every
// command; those a command ignores say so on stderr, and a command's own
// --verbose is its own.
func TestGlobalFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Run(context.Background(), []string{"version", "--client", "--skip-confirm", "--global-labels", "team=a", "--global-annotations", "a=b", "-v"}, &out, &errOut)
	if code != 0 || !strings.Contains(out.String(), "Client version") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
	for _, f := range []string{"--skip-confirm", "--global-labels", "--global-annotations", "--verbose"} {
		if !strings.Contains(errOut.String(), "WARN: "+f+" is accepted and ignored by liqoctl version") {
			t.Errorf("no warning that %s is ignored: %q", f, errOut.String())
		}
	}
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	errOut.Reset()
	Run(context.Background(), []string{"info", "-v"}, &out, &errOut)
	if strings.Contains(errOut.String(), "ignored") {
		t.Errorf("info's own --verbose reported as ignored: %q", errOut.String())
	}
}

// TestCompatFlags: through Run, a reference flag refused here exits with
// ExitUsage and its reason before any cluster is reached, and an ignored
// one warns.
func TestCompatFlags(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"create", "virtualnode", "vn", "--remote-cluster-id", "milan", "--vk-options-template", "liqo/vk"}, ExitUsage,
			"--vk-options-template is not supported by liqoctl create virtualnode: there is no VkOptionsTemplate here"},
		{[]string{"move", "volume", "data", "--target-node", "n1", "--restic-image", "restic"}, ExitUsage, "--mover-image"},
		{[]string{"test", "network", "--lb"}, ExitUsage, "no NodePort, LoadBalancer or external-IP check here"},
		{[]string{"network", "connect", "--remote-context", "milan", "--gw-server-type", "custom"}, ExitUsage, "only the reference's default"},
		{[]string{"generate", "peering-user", "--consumer-cluster-id", "rome", "--tls-compatibility-mode", "true"}, ExitFailure,
			"WARN: --tls-compatibility-mode is accepted and ignored by liqoctl generate peering-user"},
		{[]string{"create", "nonce", "--remote-cluster-id", "rome", "-n", "liqo", "--liqo-namespace", "other"}, ExitUsage,
			"both name the namespace where Liqo runs"},
	} {
		var out, errOut bytes.Buffer
		code := Run(context.Background(), c.args, &out, &errOut)
		if code != c.code || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("liqoctl %s: exit %d, stderr %q: want %d and %q", strings.Join(c.args, " "), code, errOut.String(), c.code, c.want)
		}
	}
}
