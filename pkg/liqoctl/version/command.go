package version

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
)

// Info is what `liqoctl version -o json` prints.
type Info struct {
	ClientVersion string `json:"clientVersion"`
	// ServerVersion is empty (and left out) with --client or when the
	// cluster could not be reached.
	ServerVersion string `json:"serverVersion,omitempty"`
}

type options struct {
	cluster    factory.Cluster
	clientOnly bool
	print      *output.Flags
	timeout    time.Duration
}

// NewCommand returns `liqoctl version`.
func NewCommand() *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Show the version of liqoctl and of Liqo installed in the cluster",
		Long: `Show the version of liqoctl and the version of Liqo installed in the cluster
that the kubeconfig names: the image tag of the controller manager, container
` + Container + ` of Deployment ` + Deployment + ` in the namespace
of --namespace, or "` + NotInstalled + `" when there is no such Deployment.

When the cluster cannot be reached, liqoctl prints a warning instead of the
server version and still succeeds; --client does not contact the cluster.
-o json, yaml or a template prints {clientVersion, serverVersion},
serverVersion left out when it is unknown.`,
		Example: `  liqoctl version
  liqoctl version --client
  liqoctl version -o json --context rome`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	fs := cmd.Flags()
	o.cluster.AddLocalFlags(fs)
	fs.BoolVar(&o.clientOnly, "client", false, "print the client version only, without contacting the cluster")
	o.print = output.NewDocumentFlags()
	o.print.AddFlags(cmd, "print the versions as a document (default: human-readable text)")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Second, "how long to wait for the cluster's answer")
	return cmd
}

func (o *options) run(cmd *cobra.Command) error {
	if o.timeout <= 0 {
		return fmt.Errorf("--timeout must be positive, got %s", o.timeout)
	}
	info := Info{ClientVersion: Version()}
	out := cmd.OutOrStdout()
	if !o.print.Requested() {
		// The client version first, before any wait for the cluster.
		if _, err := fmt.Fprintf(out, "Client version: %s\n", info.ClientVersion); err != nil {
			return err
		}
	}
	if !o.clientOnly {
		v, err := o.serverVersion(cmd)
		if err != nil {
			return err
		}
		info.ServerVersion = v
	}
	if o.print.Requested() {
		return o.print.PrintDocument(out, info)
	}
	if info.ServerVersion == "" {
		return nil
	}
	_, err := fmt.Fprintf(out, "Server version: %s\n", info.ServerVersion)
	return err
}

// serverVersion returns the version installed in the cluster, or "" after a
// warning when the cluster cannot be reached: the client version is still
// an answer, as kubectl's version is without a cluster.
func (o *options) serverVersion(cmd *cobra.Command) (string, error) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	if err := o.cluster.Connect(ctx, o.timeout); err != nil {
		p := output.Printer{W: cmd.ErrOrStderr()}
		p.Warn("server version unknown: %s", oneLine(err.Error()))
		return "", nil
	}
	return ServerVersion(ctx, o.cluster.Clientset, o.cluster.Namespace)
}

// oneLine joins a multi-line message into one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
