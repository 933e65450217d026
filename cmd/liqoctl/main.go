// Command liqoctl drives the multi-cluster federation: peering, offloading
// and the local playground. Installed as kubectl-liqo, it is the kubectl
// plugin "kubectl liqo"; as kubectl_complete-liqo, the plugin's completion.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	// Kubeconfigs whose users authenticate with an OIDC provider
	// (auth-provider: oidc), as kubectl reads them; exec credential plugins
	// need no import.
	_ "k8s.io/client-go/plugin/pkg/client/auth/oidc"

	"github.com/liqo-go/liqo/pkg/liqoctl"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	name, args := liqoctl.Invocation(os.Args)
	code := liqoctl.RunAs(ctx, name, args, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
