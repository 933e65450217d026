package liqoctl

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestInvocation(t *testing.T) {
	cases := []struct {
		argv []string
		name string
		args []string
	}{
		{[]string{"liqoctl", "peer"}, "liqoctl", []string{"peer"}},
		{[]string{"/usr/local/bin/liqoctl"}, "liqoctl", []string{}},
		{[]string{"/tmp/go-build123/b001/exe/liqoctl-renamed", "info"}, "liqoctl", []string{"info"}},
		{[]string{"/usr/local/bin/kubectl-liqo", "peer", "--context", "rome"}, "kubectl liqo", []string{"peer", "--context", "rome"}},
		{[]string{"kubectl-liqo.exe", "info"}, "kubectl liqo", []string{"info"}},
		{[]string{"kubectl-liqo_ctl", "info"}, "kubectl liqo-ctl", []string{"info"}},
		{[]string{"/home/u/bin/kubectl_complete-liqo", "pe"}, "kubectl liqo", []string{cobra.ShellCompRequestCmd, "pe"}},
		{nil, "liqoctl", nil},
	}
	for _, c := range cases {
		name, args := Invocation(c.argv)
		if name != c.name || !slices.Equal(args, c.args) {
			t.Errorf("Invocation(%q) = %q, %q; want %q, %q", c.argv, name, args, c.name, c.args)
		}
	}
}

// TestPluginHelp: as the kubectl plugin, usage lines, examples and the
// usage-error hint say "kubectl liqo".
func TestPluginHelp(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := RunAs(context.Background(), "kubectl liqo", []string{"peer", "--help"}, &out, &errOut); code != 0 {
		t.Fatalf("peer --help: exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"\n  kubectl liqo peer [NAME] [flags]", "\n  kubectl liqo peer --context rome --remote-context milan", "\n  kubectl liqo peer [command]"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "\n  liqoctl ") {
		t.Errorf("help still shows liqoctl commands:\n%s", out.String())
	}
	out.Reset()
	errOut.Reset()
	if code := RunAs(context.Background(), "kubectl liqo", []string{"info", "--bad"}, &out, &errOut); code != ExitUsage ||
		!strings.Contains(errOut.String(), "Run 'kubectl liqo info --help' for usage.") {
		t.Errorf("exit %d, stderr %q: want %d and the hint naming kubectl liqo", code, errOut.String(), ExitUsage)
	}
}
