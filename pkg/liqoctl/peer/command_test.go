package peer

import (
	"maps"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/liqo-go/liqo/pkg/peering"
)

func TestRequested(t *testing.T) {
	cases := []struct {
		name    string
		o       ResourceFlags
		want    string
		wantErr string
	}{
		{"defaults", ResourceFlags{CPU: "4", Memory: "8Gi", Pods: "110"}, "cpu=4, memory=8Gi, pods=110", ""},
		{"extra resource", ResourceFlags{CPU: "8", Memory: "16Gi", Pods: "50", Resources: map[string]string{"nvidia.com/gpu": "1"}},
			"cpu=8, memory=16Gi, pods=50, nvidia.com/gpu=1", ""},
		{"bad extra resource", ResourceFlags{CPU: "4", Memory: "8Gi", Pods: "110", Resources: map[string]string{"nvidia.com/gpu": "one"}}, "",
			`--resource nvidia.com/gpu: "one" is not a quantity`},
		{"bad cpu", ResourceFlags{CPU: "lots", Memory: "8Gi", Pods: "110"}, "", `--cpu: "lots" is not a quantity`},
		{"negative memory", ResourceFlags{CPU: "4", Memory: "-1Gi", Pods: "110"}, "", `--memory: "-1Gi" is negative`},
		{"resource without name", ResourceFlags{CPU: "4", Memory: "8Gi", Pods: "110", Resources: map[string]string{"": "1"}}, "",
			`--resource "=1" is not of the form name=quantity`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.o.requested()
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("got %v, want error containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil || peering.FormatResources(got) != c.want {
				t.Fatalf("got %q, %v; want %q", peering.FormatResources(got), err, c.want)
			}
		})
	}
}

// TestResourceFlag: --resource is pflag's map flag, repeatable and
// comma-separated, and a pair without "=" is refused when the flags are
// parsed, naming the flag.
func TestResourceFlag(t *testing.T) {
	parse := func(args ...string) (ResourceFlags, error) {
		var r ResourceFlags
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		fs.SetOutput(new(strings.Builder))
		r.bind(fs, "ask for")
		return r, fs.Parse(args)
	}
	r, err := parse("--resource", "nvidia.com/gpu=1", "--resource", "example.com/fpga=2,example.com/dongle=3")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"nvidia.com/gpu": "1", "example.com/fpga": "2", "example.com/dongle": "3"}
	if !maps.Equal(r.Resources, want) {
		t.Errorf("got %v, want %v", r.Resources, want)
	}
	if _, err := parse("--resource", "gpu"); err == nil || !strings.Contains(err.Error(), `"--resource" flag`) || !strings.Contains(err.Error(), "key=value") {
		t.Errorf("--resource gpu: got %v, want a parse error naming --resource and key=value", err)
	}
}

func TestPeerRequiresRemoteKubeconfig(t *testing.T) {
	cmd := NewCommand()
	cmd.SetArgs([]string{})
	cmd.SetOut(new(strings.Builder))
	cmd.SetErr(new(strings.Builder))
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "remote-kubeconfig") {
		t.Fatalf("want a missing --remote-kubeconfig error, got %v", err)
	}
}
