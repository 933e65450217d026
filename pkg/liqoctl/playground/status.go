package playground

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/spf13/cobra"

	"github.com/liqo-go/liqo/pkg/testbed"
)

func newStatusCommand(dir *string) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show the playground clusters and whether their API servers answer",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return status(cmd.Context(), cmd.OutOrStdout(), layout{*dir})
		},
	}
}

func status(ctx context.Context, out io.Writer, l layout) error {
	names := l.names()
	if len(names) == 0 {
		fmt.Fprintf(out, "no playground cluster in %s; start one with: liqoctl playground up%s\n", l.dir, dirFlag(l))
		return nil
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "CLUSTER\tPHASE\tOWNER PID\tAPI SERVER\tNODES READY\tKUBECONFIG")
	for _, name := range names {
		st, err := l.read(name)
		if err != nil {
			fmt.Fprintf(w, "%s\tunknown (%v)\t\t\t\t\n", name, err)
			continue
		}
		phase := st.Phase
		if !ownerAlive(st) {
			phase = "Dead (run `up` again or `down`)"
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\n", name, phase, st.PID, st.Server, nodesReady(ctx, st), st.Kubeconfig)
	}
	return w.Flush()
}

// nodesReady asks the cluster itself, so status tells whether it answers.
func nodesReady(ctx context.Context, st *clusterState) string {
	if st.Phase != phaseReady {
		return "-"
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", st.Kubeconfig)
	if err != nil {
		return "kubeconfig unreadable"
	}
	cfg.Timeout = 3 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err.Error()
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "API server not answering"
	}
	ready := 0
	for i := range nodes.Items {
		if testbed.NodeReady(&nodes.Items[i]) {
			ready++
		}
	}
	return fmt.Sprintf("%d/%d", ready, len(nodes.Items))
}
