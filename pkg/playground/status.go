package playground

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/spf13/cobra"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
	"github.com/liqo-go/liqo/pkg/testbed"
)

func newStatusCommand(dir *string) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show the playground clusters and whether their API servers answer",
		Long: `Show each playground cluster: its phase (Dead when the process that runs it is
gone), its API server's address, its nodes Ready by kind (real, simulated,
virtual), asked of the API server itself, and the path of its kubeconfig.`,
		Example: `  liqo-playground status
  liqo-playground status --dir /tmp/playground`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return status(cmd.Context(), cmd.OutOrStdout(), layout{*dir})
		},
	}
}

func status(ctx context.Context, out io.Writer, l layout) error {
	names := l.names()
	if len(names) == 0 {
		fmt.Fprintf(out, "no playground cluster in %s; start one with: liqo-playground up%s\n", l.dir, dirFlag(l))
		return nil
	}
	var rows [][]string
	for _, name := range names {
		st, err := l.read(name)
		if err != nil {
			rows = append(rows, []string{name, fmt.Sprintf("unknown (%v)", err), "", "", "", "", ""})
			continue
		}
		phase := st.Phase
		if !ownerAlive(st) {
			phase = "Dead (run `up` again or `down`)"
		}
		ready, kinds := nodesReady(ctx, st)
		rows = append(rows, []string{name, phase, strconv.Itoa(st.PID), st.Server, ready, kinds, st.Kubeconfig})
	}
	return output.Table(out, []string{"cluster", "phase", "owner pid", "api server", "nodes ready", "node kinds", "kubeconfig"}, rows)
}

// nodesReady asks the cluster itself, so status tells whether it answers,
// and counts its nodes by kind: real (running containers), simulated (kwok)
// and virtual (a peered provider).
func nodesReady(ctx context.Context, st *clusterState) (ready, kinds string) {
	if st.Phase != phaseReady {
		return "-", "-"
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", st.Kubeconfig)
	if err != nil {
		return "kubeconfig unreadable", "-"
	}
	cfg.Timeout = 3 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err.Error(), "-"
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "API server not answering", "-"
	}
	n := 0
	count := map[string]int{}
	for i := range nodes.Items {
		node := &nodes.Items[i]
		if testbed.NodeReady(node) {
			n++
		}
		switch {
		case node.Labels[consts.TypeLabel] == consts.TypeVirtualNode:
			count["virtual"]++
		case node.Labels[testbed.NodeTypeLabel] == testbed.RealNodeType:
			count["real"]++
		default:
			count["simulated"]++
		}
	}
	var parts []string
	for _, k := range []string{"real", "simulated", "virtual"} {
		if count[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", count[k], k))
		}
	}
	return fmt.Sprintf("%d/%d", n, len(nodes.Items)), strings.Join(parts, ", ")
}
