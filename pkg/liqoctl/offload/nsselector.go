package offload

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
)

// NsSelectorFlag is the flag of offload and unoffload namespace naming the
// namespaces by a label selector instead of by name (the reference's).
const NsSelectorFlag = "ns-selector"

// namespaceArgs checks that a namespace command is given either a NAME or
// --ns-selector.
func namespaceArgs(selector *string) func(*cobra.Command, []string) error {
	return func(_ *cobra.Command, args []string) error {
		switch {
		case len(args) > 1:
			return fmt.Errorf("accepts 1 arg, received %d", len(args))
		case len(args) == 1 && *selector != "":
			return fmt.Errorf("give a namespace NAME or --%s, not both", NsSelectorFlag)
		case len(args) == 0 && *selector == "":
			return fmt.Errorf("give a namespace NAME, or --%s with a label selector", NsSelectorFlag)
		}
		return nil
	}
}

// selected returns, sorted, the namespaces of the cluster the label
// selector sel matches, but Liqo's own: its namespace, the tenant
// namespaces and the twin namespaces it made for a consumer, which are
// never offloaded.
func selected(ctx context.Context, c *factory.Cluster, timeout time.Duration, sel string) ([]string, error) {
	s, err := labels.Parse(sel)
	if err != nil {
		return nil, fmt.Errorf("--%s %q: %w", NsSelectorFlag, sel, err)
	}
	if err := c.Connect(ctx, min(timeout/4, 10*time.Second)); err != nil {
		return nil, err
	}
	var list corev1.NamespaceList
	if err := c.Client.List(ctx, &list, client.MatchingLabelsSelector{Selector: s}); err != nil {
		return nil, fmt.Errorf("listing the namespaces matching %q: %w", sel, err)
	}
	var out []string
	for _, ns := range list.Items {
		if liqoOwn(&ns, c.Namespace) {
			continue
		}
		out = append(out, ns.Name)
	}
	slices.Sort(out)
	if len(out) == 0 {
		return nil, fmt.Errorf("no namespace matches --%s %q (Liqo's own namespaces are never selected)", NsSelectorFlag, sel)
	}
	return out, nil
}

// liqoOwn tells whether ns is one of Liqo's namespaces in a cluster where
// Liqo runs in liqoNamespace.
func liqoOwn(ns *corev1.Namespace, liqoNamespace string) bool {
	if ns.Name == liqoNamespace || ns.Labels[consts.TenantNamespaceLabel] != "" || ns.Labels[consts.TwinNamespaceLabel] != "" {
		return true
	}
	_, tenant := consts.ClusterIDOfTenantNamespace(ns.Name)
	return tenant
}

// forEachSelected runs do for each namespace sel selects, all of them
// whatever fails, and returns the failures together.
func forEachSelected(ctx context.Context, c *factory.Cluster, timeout time.Duration, sel string, out *output.Printer, do func(ns string) error) error {
	names, err := selected(ctx, c, timeout, sel)
	if err != nil {
		return err
	}
	out.Info("--%s %q selects %d namespaces: %v", NsSelectorFlag, sel, len(names), names)
	var errs []error
	for _, ns := range names {
		if err := do(ns); err != nil {
			errs = append(errs, fmt.Errorf("namespace %s: %w", ns, err))
		}
	}
	return errors.Join(errs...)
}
