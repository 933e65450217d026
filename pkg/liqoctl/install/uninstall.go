package install

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"helm.sh/helm/v3/pkg/action"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
)

type uninstallOptions struct {
	cluster factory.Cluster
	purge   bool
	timeout time.Duration
}

// NewUninstallCommand returns liqoctl uninstall.
func NewUninstallCommand() *cobra.Command {
	o := &uninstallOptions{}
	cmd := &cobra.Command{
		Use:   "uninstall",
		Short: "Remove Liqo from a cluster",
		Long: `Remove the Helm release "liqo" from the cluster of the kubeconfig.

It refuses while the cluster has peerings (ForeignClusters) or offloaded
namespaces (NamespaceOffloadings), naming them: unpeer and unoffload first,
so that no peer is left with half a peering and no remote pod is orphaned.
What the controller manager created outside the chart (the node agent's
DaemonSet, ClusterRoles and bindings, certificate requests: everything
labelled app.kubernetes.io/managed-by=liqo) goes with it.

The CRDs, with every Liqo object still stored, and the cluster's identity
(its cluster ID, which peers know it by) are kept, so that installing again
carries on. --purge removes them too: every *.liqo.io CRD, the tenant
namespaces and the install namespace.

Nothing waits forever on a finalizer: what is not gone within --timeout is
reported, with the finalizers holding it.`,
		Example: `  liqoctl uninstall
  liqoctl uninstall --purge --timeout 2m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), &output.Printer{W: cmd.OutOrStdout()})
		},
	}
	o.cluster.AddLocalFlags(cmd.Flags())
	cmd.Flags().BoolVar(&o.purge, "purge", false, "also remove the CRDs (and every Liqo object), the tenant namespaces and the install namespace")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 5*time.Minute, "how long to wait for what is removed to be gone")
	return cmd
}

func (o *uninstallOptions) run(ctx context.Context, p *output.Printer) error {
	p.Step("Connecting to the cluster")
	if err := o.cluster.Connect(ctx, 10*time.Second); err != nil {
		return err
	}
	if err := o.refuseInUse(ctx); err != nil {
		return err
	}
	ns := o.cluster.Namespace
	cfg, err := helmConfig(&o.cluster, ns, func(string, ...any) {})
	if err != nil {
		return err
	}
	rel, err := installed(cfg)
	if err != nil {
		return fmt.Errorf("reading the release %s: %w", ReleaseName, err)
	}
	if rel == nil {
		p.Info("No release %s in namespace %s", ReleaseName, ns)
	} else {
		p.Step("Uninstalling release %s from namespace %s", ReleaseName, ns)
		un := action.NewUninstall(cfg)
		un.Wait, un.Timeout = true, o.timeout
		if _, err := un.Run(ReleaseName); err != nil {
			return fmt.Errorf("uninstalling release %s: %w", ReleaseName, err)
		}
	}
	if err := o.removeManagerObjects(ctx, p); err != nil {
		return err
	}
	if !o.purge {
		p.Info("Liqo uninstalled; the CRDs and the cluster's identity are kept (--purge removes them)")
		return nil
	}
	return o.purgeAll(ctx, p)
}

// removeManagerObjects deletes what the controller manager created outside
// the chart and nobody else would remove once it is gone: the node agent's
// DaemonSet, ServiceAccount, ClusterRole and binding, the gateways'
// ClusterRoleBinding, certificate requests. They all carry its label.
func (o *uninstallOptions) removeManagerObjects(ctx context.Context, p *output.Printer) error {
	cs := o.cluster.Clientset
	sel := metav1.ListOptions{LabelSelector: consts.ManagedByLabel + "=" + consts.ManagedByValue}
	ns := o.cluster.Namespace
	p.Step("Removing what the controller manager created (label %s)", sel.LabelSelector)
	for what, del := range map[string]func() error{
		"DaemonSets": func() error { return cs.AppsV1().DaemonSets(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, sel) },
		"ServiceAccounts": func() error {
			return cs.CoreV1().ServiceAccounts(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, sel)
		},
		"ClusterRoleBindings": func() error {
			return cs.RbacV1().ClusterRoleBindings().DeleteCollection(ctx, metav1.DeleteOptions{}, sel)
		},
		"ClusterRoles": func() error { return cs.RbacV1().ClusterRoles().DeleteCollection(ctx, metav1.DeleteOptions{}, sel) },
		"CertificateSigningRequests": func() error {
			return cs.CertificatesV1().CertificateSigningRequests().DeleteCollection(ctx, metav1.DeleteOptions{}, sel)
		},
	} {
		if err := del(); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting the controller manager's %s: %w", what, err)
		}
	}
	return nil
}

// refuseInUse names the peerings and offloaded namespaces that uninstalling
// would break.
func (o *uninstallOptions) refuseInUse(ctx context.Context) error {
	var fcs corev1beta1.ForeignClusterList
	if err := o.cluster.Client.List(ctx, &fcs); err != nil && !isNoKind(err) {
		return fmt.Errorf("listing peerings: %w", err)
	}
	var offs offv1beta1.NamespaceOffloadingList
	if err := o.cluster.Client.List(ctx, &offs); err != nil && !isNoKind(err) {
		return fmt.Errorf("listing offloaded namespaces: %w", err)
	}
	var problems []string
	if len(fcs.Items) > 0 {
		var names []string
		for _, fc := range fcs.Items {
			names = append(names, fc.Name)
		}
		problems = append(problems, fmt.Sprintf("peered with %s (liqoctl unpeer)", strings.Join(names, ", ")))
	}
	if len(offs.Items) > 0 {
		var names []string
		for _, off := range offs.Items {
			names = append(names, off.Namespace)
		}
		problems = append(problems, fmt.Sprintf("namespaces offloaded: %s (liqoctl unoffload namespace)", strings.Join(names, ", ")))
	}
	if len(problems) > 0 {
		return fmt.Errorf("refusing to uninstall: this cluster is %s", strings.Join(problems, "; "))
	}
	return nil
}

// isNoKind tells a list of a kind whose CRD is gone (an earlier purge).
func isNoKind(err error) bool {
	return apierrors.IsNotFound(err) || meta.IsNoMatchError(err) || strings.Contains(err.Error(), "no matches for")
}

// purgeTarget is one object purge deletes.
type purgeTarget struct {
	what string
	// get returns the object's finalizers, or a NotFound error once gone.
	get func(context.Context) ([]string, error)
	del func(context.Context) error
}

// purgeAll deletes the CRDs, the tenant namespaces and the install
// namespace, then waits for them to be gone, reporting what is not.
func (o *uninstallOptions) purgeAll(ctx context.Context, p *output.Printer) error {
	ext, err := apiextclient.NewForConfig(o.cluster.Config)
	if err != nil {
		return err
	}
	crdAPI := ext.ApiextensionsV1().CustomResourceDefinitions()
	nsAPI := o.cluster.Clientset.CoreV1().Namespaces()
	var targets []purgeTarget

	crdList, err := crdAPI.List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing CRDs: %w", err)
	}
	for _, crd := range crdList.Items {
		if !strings.HasSuffix(crd.Spec.Group, ".liqo.io") {
			continue
		}
		name := crd.Name
		targets = append(targets, purgeTarget{what: "CRD " + name,
			get: func(ctx context.Context) ([]string, error) {
				got, err := crdAPI.Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return nil, err
				}
				return got.Finalizers, nil
			},
			del: func(ctx context.Context) error { return crdAPI.Delete(ctx, name, metav1.DeleteOptions{}) }})
	}
	nss, err := nsAPI.List(ctx, metav1.ListOptions{LabelSelector: consts.TenantNamespaceLabel})
	if err != nil {
		return fmt.Errorf("listing tenant namespaces: %w", err)
	}
	storageNSs, err := nsAPI.List(ctx, metav1.ListOptions{LabelSelector: consts.StorageNamespaceLabel})
	if err != nil {
		return fmt.Errorf("listing storage namespaces: %w", err)
	}
	names := []string{o.cluster.Namespace}
	for _, n := range append(nss.Items, storageNSs.Items...) {
		names = append(names, n.Name)
	}
	for _, name := range names {
		targets = append(targets, purgeTarget{what: "namespace " + name,
			get: func(ctx context.Context) ([]string, error) {
				got, err := nsAPI.Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return nil, err
				}
				fins := got.Finalizers
				for _, f := range got.Spec.Finalizers {
					fins = append(fins, string(f))
				}
				return fins, nil
			},
			del: func(ctx context.Context) error { return nsAPI.Delete(ctx, name, metav1.DeleteOptions{}) }})
	}

	p.Step("Purging %d objects: the *.liqo.io CRDs, the tenant and storage namespaces, namespace %s", len(targets), o.cluster.Namespace)
	for _, t := range targets {
		if err := t.del(ctx); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s: %w", t.what, err)
		}
	}
	var left []string
	_ = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, o.timeout, true, func(ctx context.Context) (bool, error) {
		left = left[:0]
		for _, t := range targets {
			fins, err := t.get(ctx)
			if apierrors.IsNotFound(err) {
				continue
			}
			what := t.what
			if len(fins) > 0 {
				what += " (finalizers: " + strings.Join(fins, ", ") + ")"
			}
			left = append(left, what)
		}
		return len(left) == 0, nil
	})
	if len(left) > 0 {
		sort.Strings(left)
		return errors.New("not gone within " + o.timeout.String() + ": " + strings.Join(left, "; "))
	}
	p.Info("Liqo purged")
	return nil
}
