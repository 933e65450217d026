package playground

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"

	"github.com/liqo-go/liqo/pkg/liqoctl/peer"
)

// peerFirstTwo peers consumer with provider exactly as a user would with
// liqoctl peer, then shows the consumer's nodes, the virtual one included.
// The network fabric joins them when both run it (they have real nodes);
// the gateway server is exposed by a NodePort, as the playground has no
// load balancer.
func peerFirstTwo(ctx context.Context, out io.Writer, l layout, consumer, provider string, networking bool) error {
	fmt.Fprintf(out, "\nPeering %s (consumer) with %s (provider):\n", consumer, provider)
	cmd := peer.NewCommand()
	cmd.SetOut(out)
	cmd.SetErr(out)
	args := []string{"--kubeconfig", l.kubeconfig(consumer), "--remote-kubeconfig", l.kubeconfig(provider)}
	if networking {
		args = append(args, "--server-service-type", "NodePort", "--timeout", "5m")
	} else {
		args = append(args, "--networking-disabled")
	}
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(ctx); err != nil {
		return err
	}
	fmt.Fprintf(out, "\n$ kubectl --kubeconfig %s get nodes\n", l.kubeconfig(consumer))
	kubectl := exec.CommandContext(ctx, filepath.Join(l.bin(), "kubectl"), "--kubeconfig", l.kubeconfig(consumer), "get", "nodes")
	kubectl.Stdout, kubectl.Stderr = out, out
	return kubectl.Run()
}
