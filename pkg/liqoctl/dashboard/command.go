package dashboard

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/cli/browser"
	"github.com/spf13/cobra"

	"github.com/liqo-go/liqo/pkg/consts"
)

// NewCommand returns `liqoctl dashboard`.
func NewCommand() *cobra.Command {
	o := Options{}
	var noBrowser bool
	cmd := &cobra.Command{
		Use:   "dashboard",
		Short: "Open a live web view of the peerings of your clusters",
		Long: `Serve, on 127.0.0.1 only, a web page that draws the kubeconfig's clusters
and their peerings: each consumer → provider peering as an arrow marked with
the health of its authentication, offloading and networking, the tunnel's
latency and the remapped CIDRs; per peering the resources asked, granted and
used (GPUs and other extended resources included); the offloaded namespaces
with their twin on each cluster and where their pods run; the pods in
trouble with the reason their provider gave; and the recent peering Events.

Every context of the kubeconfig is shown, or those named with --context
(repeatable). Each cluster is read with that context's credentials and
watched: the page changes as the clusters do, with no reload. Nothing runs
in the clusters and nothing leaves this machine; the page's data is also
served as JSON at /api/state. The browser opens on the page unless
--no-browser is given; Ctrl-C stops the dashboard.`,
		Example: `  liqoctl dashboard
  liqoctl dashboard --context rome --context milan
  liqoctl dashboard --kubeconfig ~/.liqo/playground/all.kubeconfig --port 8790 --no-browser`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Timeout <= 0 {
				return fmt.Errorf("--timeout must be positive, got %s", o.Timeout)
			}
			if o.Port < 0 || o.Port > 65535 {
				return fmt.Errorf("--port must be a port number (0 for any free port), got %d", o.Port)
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
			defer stop()
			srv, err := Start(ctx, o)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "Dashboard of %d context(s) %v at %s (Ctrl-C to stop)\n", len(srv.Contexts), srv.Contexts, srv.URL)
			if !noBrowser {
				browser.Stdout, browser.Stderr = cmd.ErrOrStderr(), cmd.ErrOrStderr()
				if err := browser.OpenURL(srv.URL); err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "could not open a browser (%v): open %s yourself\n", err, srv.URL)
				}
			}
			return srv.Wait()
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "path to the kubeconfig whose contexts to show (default: $KUBECONFIG or ~/.kube/config)")
	fs.StringArrayVar(&o.Contexts, "context", nil, "a kubeconfig context to show (repeatable; default: every context of the kubeconfig)")
	fs.StringVarP(&o.Namespace, "namespace", "n", consts.DefaultNamespace, "namespace where Liqo runs in the clusters")
	fs.IntVar(&o.Port, "port", 0, "port on 127.0.0.1 to serve the page on (0: any free port)")
	fs.BoolVar(&noBrowser, "no-browser", false, "do not open a browser: print the page's address only")
	fs.DurationVar(&o.Timeout, "timeout", 15*time.Second, "how long to wait for each cluster's API server when connecting")
	return cmd
}
