package completion_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/liqo-go/liqo/pkg/liqoctl"
)

// complete returns what the shell scripts get for `liqoctl args...`, the
// last argument being the word to complete: the candidates (without their
// descriptions) and the directive.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := liqoctl.Run(t.Context(), append([]string{cobra.ShellCompRequestCmd}, args...), &out, &errOut); code != 0 {
		t.Fatalf("__complete %q: exit %d: %s", args, code, errOut.String())
	}
	var got []string
	for line := range strings.Lines(out.String()) {
		line = strings.TrimSuffix(line, "\n")
		if strings.HasPrefix(line, ":") {
			return got, line
		}
		name, _, _ := strings.Cut(line, "\t")
		got = append(got, name)
	}
	t.Fatalf("__complete %q: no directive in %q", args, out.String())
	return nil, ""
}

const kubeconfig = `apiVersion: v1
kind: Config
current-context: rome
clusters:
- {name: rome-cluster, cluster: {server: "https://127.0.0.1:1"}}
- {name: milan-cluster, cluster: {server: "https://127.0.0.1:1"}}
users:
- {name: admin, user: {token: t}}
contexts:
- {name: rome, context: {cluster: rome-cluster, user: admin}}
- {name: milan, context: {cluster: milan-cluster, user: admin}}
- {name: naples, context: {cluster: milan-cluster, user: admin}}
`

// noFiles is the directive that stops the shell offering files instead.
var noFiles = fmt.Sprintf(":%d", cobra.ShellCompDirectiveNoFileComp)

func writeKubeconfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestKubeconfigCompletion: --context, --remote-context, --cluster and
// --user complete with the names of the kubeconfig the command reads:
// --kubeconfig's, $KUBECONFIG's, or for the remote ones
// --remote-kubeconfig's falling back to the local one.
func TestKubeconfigCompletion(t *testing.T) {
	path := writeKubeconfig(t)
	other := filepath.Join(t.TempDir(), "other")
	if err := os.WriteFile(other, []byte(strings.ReplaceAll(kubeconfig, "name: naples", "name: venice")), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", "")
	cases := []struct {
		env  string
		args []string
		want []string
	}{
		{"", []string{"info", "--kubeconfig", path, "--context", ""}, []string{"milan", "naples", "rome"}},
		{path, []string{"info", "--context", ""}, []string{"milan", "naples", "rome"}},
		{path, []string{"info", "--context", "n"}, []string{"naples"}},
		{"", []string{"peer", "--kubeconfig", path, "--remote-context", ""}, []string{"milan", "naples", "rome"}},
		{"", []string{"peer", "--kubeconfig", path, "--remote-kubeconfig", other, "--remote-context", ""}, []string{"milan", "rome", "venice"}},
		{path, []string{"unpeer", "--remote-cluster", "m"}, []string{"milan-cluster"}},
		{path, []string{"version", "--user", ""}, []string{"admin"}},
	}
	for _, c := range cases {
		t.Setenv("KUBECONFIG", c.env)
		got, directive := complete(t, c.args...)
		if !slices.Equal(got, c.want) || directive != noFiles {
			t.Errorf("KUBECONFIG=%s liqoctl %q<Tab>: %q %s, want %q %s", c.env, c.args, got, directive, c.want, noFiles)
		}
	}
}

// TestEnumCompletion: flags taking one of a few values complete with them.
func TestEnumCompletion(t *testing.T) {
	// -o takes kubectl's formats; a document (info, version) is no object
	// and has no name.
	documentFormats := []string{"go-template-file=", "go-template=", "json", "jsonpath-as-json=", "jsonpath-file=", "jsonpath=", "template=", "templatefile=", "yaml"}
	objectFormats := []string{"go-template-file=", "go-template=", "json", "jsonpath-as-json=", "jsonpath-file=", "jsonpath=", "name", "template=", "templatefile=", "yaml"}
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"offload", "namespace", "foo", "--pod-offloading-strategy", ""}, []string{"LocalAndRemote", "Local", "Remote"}},
		{[]string{"offload", "namespace", "foo", "--namespace-mapping-strategy", ""}, []string{"DefaultName", "EnforceSameName", "SelectedName"}},
		{[]string{"offload", "namespace", "foo", "-o", ""}, objectFormats},
		{[]string{"peer", "--server-service-type", ""}, []string{"LoadBalancer", "NodePort", "ClusterIP"}},
		{[]string{"network", "connect", "--gw-server-service-type", ""}, []string{"LoadBalancer", "NodePort", "ClusterIP"}},
		{[]string{"info", "-o", ""}, documentFormats},
		{[]string{"version", "--output", ""}, documentFormats},
		{[]string{"create", "resourceslice", "s", "-o", ""}, objectFormats},
		{[]string{"generate", "tenant", "-o", ""}, objectFormats},
	}
	for _, c := range cases {
		if got, directive := complete(t, c.args...); !slices.Equal(got, c.want) || directive != noFiles {
			t.Errorf("liqoctl %q<Tab>: %q %s, want %q %s", c.args, got, directive, c.want, noFiles)
		}
	}
}

// TestClusterCompletionUnreachable: a completion that reads the cluster
// offers nothing, quickly and without an error, when the cluster cannot be
// reached.
func TestClusterCompletionUnreachable(t *testing.T) {
	path := writeKubeconfig(t)
	for _, args := range [][]string{
		{"offload", "namespace", "--kubeconfig", path, ""},
		{"unoffload", "namespace", "--kubeconfig", path, ""},
		{"info", "peer", "--kubeconfig", path, ""},
		{"force", "unpeer", "--kubeconfig", path, ""},
		{"cordon", "tenant", "--kubeconfig", path, ""},
		{"create", "resourceslice", "s", "--kubeconfig", path, "--remote-cluster-id", ""},
	} {
		if got, directive := complete(t, args...); len(got) != 0 || directive != noFiles {
			t.Errorf("liqoctl %q<Tab>: %q %s, want nothing and %s", args, got, directive, noFiles)
		}
	}
}
