package peer

import (
	"strings"
	"testing"

	"github.com/liqo-go/liqo/pkg/peering"
	"github.com/liqo-go/liqo/pkg/peeringuser"
	"github.com/liqo-go/liqo/test/harness"
)

// TestOutOfBandRequest: the arguments are checked before anything is
// recorded, and make the request the manager reads.
func TestOutOfBandRequest(t *testing.T) {
	tok := peeringuser.Token{CA: harness.SelfSignedCA(t, "test-ca"), Bearer: "abc.def.ghi"}.String()
	base := func() *outOfBandOptions {
		o := &outOfBandOptions{name: "milan", clusterID: "milan", authURL: "https://milan.example:6443", authToken: tok}
		o.CreateResourceSlice, o.CreateVirtualNode = true, true
		o.ResourceFlags = ResourceFlags{CPU: "2", Memory: "4Gi", Pods: "20"}
		o.Network.ServerServiceType, o.Network.ServerPort, o.Network.MTU = "NodePort", 51840, 1340
		return o
	}
	r, err := base().request()
	if err != nil {
		t.Fatal(err)
	}
	if r.ID == "" || r.ClusterID != "milan" || r.Token != tok || peering.FormatResources(r.Resources) != "cpu=2, memory=4Gi, pods=20" {
		t.Errorf("request: %+v", r)
	}
	if r.Network == nil || r.Network.ServerServiceType != "NodePort" || r.Network.MTU != 1340 {
		t.Errorf("the request's network: %+v, want the connect flags for the manager", r.Network)
	}
	disabled := base()
	disabled.NetworkingDisabled = true
	if r, err := disabled.request(); err != nil || r.Network != nil {
		t.Errorf("--networking-disabled: network %+v (%v), want none", r.Network, err)
	}
	if again, _ := base().request(); again.ID == r.ID {
		t.Error("two runs made requests of the same ID")
	}
	for _, c := range []struct {
		name, want string
		edit       func(*outOfBandOptions)
	}{
		{"NAME is not the cluster ID", `NAME must be "milan"`, func(o *outOfBandOptions) { o.name = "florence" }},
		{"bad cluster ID", "--cluster-id", func(o *outOfBandOptions) { o.name, o.clusterID = "Milan", "Milan" }},
		{"http URL", "--auth-url", func(o *outOfBandOptions) { o.authURL = "http://milan.example:6443" }},
		{"garbled token", "--auth-token", func(o *outOfBandOptions) { o.authToken = "x" + tok }},
		{"in band", "peer in-band", func(o *outOfBandOptions) { o.InBand = true }},
		{"bad quantity", "--cpu", func(o *outOfBandOptions) { o.CPU = "lots" }},
		{"bad Service type", "--server-service-type", func(o *outOfBandOptions) { o.Network.ServerServiceType = "ExternalName" }},
		{"server on the consumer", "peering user may not create", func(o *outOfBandOptions) { o.Network.ServerLocation = "Local" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := base()
			c.edit(o)
			if _, err := o.request(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error naming %q", err, c.want)
			}
		})
	}
}
