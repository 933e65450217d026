package peer

import (
	"strings"
	"testing"
)

func TestRequested(t *testing.T) {
	cases := []struct {
		name    string
		o       ResourceFlags
		want    string
		wantErr string
	}{
		{"defaults", ResourceFlags{CPU: "4", Memory: "8Gi", Pods: "110"}, "cpu=4, memory=8Gi, pods=110", ""},
		{"extra resource", ResourceFlags{CPU: "8", Memory: "16Gi", Pods: "50", Resources: []string{"nvidia.com/gpu=1"}},
			"cpu=8, memory=16Gi, pods=50, nvidia.com/gpu=1", ""},
		{"bad cpu", ResourceFlags{CPU: "lots", Memory: "8Gi", Pods: "110"}, "", `--cpu: "lots" is not a quantity`},
		{"negative memory", ResourceFlags{CPU: "4", Memory: "-1Gi", Pods: "110"}, "", `--memory: "-1Gi" is negative`},
		{"resource without quantity", ResourceFlags{CPU: "4", Memory: "8Gi", Pods: "110", Resources: []string{"gpu"}}, "",
			`--resource "gpu" is not of the form name=quantity`},
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
			if err != nil || formatResources(got) != c.want {
				t.Fatalf("got %q, %v; want %q", formatResources(got), err, c.want)
			}
		})
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
