package peer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/compat"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
	"github.com/liqo-go/liqo/pkg/peering"
	"github.com/liqo-go/liqo/pkg/wait"
)

// requireIdentity checks that the consumer (c) is authenticated with
// provider: without an Identity no ResourceSlice reaches it and no virtual
// node can talk to it.
func requireIdentity(ctx context.Context, c client.Client, provider string) error {
	var id authv1beta1.Identity
	key := types.NamespacedName{Namespace: consts.TenantNamespace(provider), Name: consts.IdentityName(provider)}
	switch err := c.Get(ctx, key, &id); {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("this cluster is not authenticated with %s (no Identity %s): run liqoctl authenticate, liqoctl peer --create-resource-slice=false, or the manual steps (liqoctl create nonce, generate tenant, generate identity)",
			provider, key)
	case err != nil:
		return fmt.Errorf("reading the Identity for %s: %w", provider, err)
	}
	if cond := meta.FindStatusCondition(id.Status.Conditions, authv1beta1.ReadyCondition); cond == nil || cond.Status != metav1.ConditionTrue {
		why := "not processed yet"
		if cond != nil {
			why = cond.Message
		}
		return fmt.Errorf("the Identity for %s (%s) is not usable: %s", provider, key, why)
	}
	return nil
}

func newCreateResourceSliceCommand() *cobra.Command {
	o := &onePeer{}
	var res ResourceFlags
	var class string
	var noVirtualNode bool
	cmd := &cobra.Command{
		Use:   "resourceslice NAME",
		Short: "Ask a provider for resources with a ResourceSlice (on the consumer)",
		Long: `Ask a provider, which this cluster (the consumer) is authenticated with
(liqoctl authenticate), for resources: the command creates the ResourceSlice
NAME in the provider's tenant namespace, which reaches the provider, and
waits for its decision. The provider may grant less than asked (its
policy), or deny. Once granted, this cluster makes a virtual node named
NAME that offers them, and the command waits until it is Ready; with
--no-virtual-node it makes none (liqoctl create virtualnode
--resource-slice-name NAME makes one later).

With --output the ResourceSlice is printed instead of created. Running the
command again with other quantities resizes the slice.`,
		Example: `  liqoctl create resourceslice pool --remote-cluster-id milan --cpu 4 --memory 8Gi --pods 30
  liqoctl create resourceslice gpus --remote-cluster-id milan --resource nvidia.com/gpu=2 --no-virtual-node`,
		Args: cobra.ExactArgs(1),
	}
	o.bind(cmd, "provider", false, 2*time.Minute)
	fs := cmd.Flags()
	res.bind(fs, "ask the provider for")
	fs.StringVar(&class, "class", string(authv1beta1.DefaultResourceSliceClass), "class of the ResourceSlice, which selects the provider's policy")
	fs.BoolVar(&noVirtualNode, "no-virtual-node", false, "make no virtual node of the granted resources")
	o.print = output.NewObjectFlags("")
	o.print.AddFlags(cmd, "print the ResourceSlice instead of creating it")
	cmd.RunE = o.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
		name := args[0]
		requested, err := res.requested()
		if err != nil {
			return err
		}
		want := peering.ForgeResourceSlice(o.local.ID, o.remoteID, name, requested, !noVirtualNode)
		want.Spec.Class = authv1beta1.ResourceSliceClass(class)
		if o.print.Requested() {
			return o.print.PrintObject(cmd.OutOrStdout(), want)
		}
		c := o.cluster.Client
		if err := requireIdentity(ctx, c, o.remoteID); err != nil {
			return err
		}
		out := &output.Printer{W: cmd.OutOrStdout()}
		s, err := peering.EnsureResourceSlice(ctx, c, out, want)
		if err != nil {
			return err
		}
		if noVirtualNode {
			out.Info("No virtual node made (--no-virtual-node): liqoctl create virtualnode NAME --remote-cluster-id %s --resource-slice-name %s makes one", o.remoteID, name)
			return nil
		}
		return peering.WaitVirtualNode(ctx, c, out, name, s.Status.Resources)
	})
	return cmd
}

func newDeleteResourceSliceCommand() *cobra.Command {
	o := &onePeer{}
	var waitGone bool
	cmd := &cobra.Command{
		Use:   "resourceslice NAME",
		Short: "Give back the resources of a ResourceSlice, with the virtual nodes made of it (on the consumer)",
		Long: `Delete the ResourceSlice NAME this cluster (the consumer) holds from a
provider: the provider takes the resources back, and the virtual nodes made
of the slice (its own, and those liqoctl create virtualnode
--resource-slice-name NAME made) go with it, their pods with them. With
--wait (the default) the command returns once they are gone.`,
		Example: `  liqoctl delete resourceslice pool --remote-cluster-id milan`,
		Args:    cobra.ExactArgs(1),
	}
	o.bind(cmd, "provider", false, 2*time.Minute)
	cmd.Flags().BoolVar(&waitGone, "wait", true, "wait until the ResourceSlice and its virtual nodes are gone")
	cmd.RunE = o.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
		out := &output.Printer{W: cmd.OutOrStdout()}
		c := o.cluster.Client
		s := &authv1beta1.ResourceSlice{}
		key := types.NamespacedName{Namespace: consts.TenantNamespace(o.remoteID), Name: args[0]}
		switch err := c.Get(ctx, key, s); {
		case apierrors.IsNotFound(err):
			return fmt.Errorf("no ResourceSlice %s of provider %s here (%s)", args[0], o.remoteID, key)
		case err != nil:
			return err
		}
		nodes, err := virtualNodesOf(ctx, c, s)
		if err != nil {
			return err
		}
		out.Step("Deleting ResourceSlice %s", key)
		if err := client.IgnoreNotFound(c.Delete(ctx, s)); err != nil {
			return fmt.Errorf("deleting ResourceSlice %s: %w", key, err)
		}
		// The garbage collector would delete them too, but in its own
		// time; the slice goes first, so that none is made again.
		for _, vn := range nodes {
			if err := client.IgnoreNotFound(c.Delete(ctx, vn)); err != nil {
				return fmt.Errorf("deleting VirtualNode %s/%s: %w", vn.Namespace, vn.Name, err)
			}
		}
		if !waitGone {
			return nil
		}
		if err := wait.Gone(ctx, c, key, s, "ResourceSlice "+key.String()); err != nil {
			return err
		}
		for _, vn := range nodes {
			if err := waitVirtualNodeGone(ctx, c, vn); err != nil {
				return err
			}
		}
		out.Info("ResourceSlice %s deleted, with %d virtual nodes", args[0], len(nodes))
		return nil
	})
	return cmd
}

// virtualNodesOf lists the VirtualNodes made of slice s: owned by it.
func virtualNodesOf(ctx context.Context, c client.Client, s *authv1beta1.ResourceSlice) ([]*offv1beta1.VirtualNode, error) {
	var vns offv1beta1.VirtualNodeList
	if err := c.List(ctx, &vns, client.InNamespace(s.Namespace)); err != nil {
		return nil, fmt.Errorf("listing the VirtualNodes in %s: %w", s.Namespace, err)
	}
	var out []*offv1beta1.VirtualNode
	for i := range vns.Items {
		for _, ref := range vns.Items[i].OwnerReferences {
			if ref.UID == s.UID {
				out = append(out, &vns.Items[i])
			}
		}
	}
	return out, nil
}

// waitVirtualNodeGone waits until vn and its Node are gone.
func waitVirtualNodeGone(ctx context.Context, c client.Client, vn *offv1beta1.VirtualNode) error {
	if err := wait.Gone(ctx, c, client.ObjectKeyFromObject(vn), vn, "VirtualNode "+vn.Name); err != nil {
		return err
	}
	return wait.Gone(ctx, c, types.NamespacedName{Name: vn.Name}, &corev1.Node{}, "Node "+vn.Name)
}

// virtualNodeOptions are liqoctl create virtualnode's.
type virtualNodeOptions struct {
	onePeer
	res              ResourceFlags
	sliceName        string
	kubeconfigSecret string
	labels           []string
	storageClasses   []string
	createNode       bool
	wait             bool
}

func newCreateVirtualNodeCommand() *cobra.Command {
	o := &virtualNodeOptions{}
	cmd := &cobra.Command{
		Use:   "virtualnode NAME",
		Short: "Make a virtual node standing for a provider (on the consumer)",
		Long: `Make, on this cluster (the consumer), the VirtualNode NAME: a node that
stands for a provider this cluster is authenticated with; the pods scheduled
on it run there.

With --resource-slice-name it offers the resources the provider granted to
that ResourceSlice (liqoctl create resourceslice --no-virtual-node), with
the node labels and storage classes the provider reported (with
--storage-classes, only those it names), and goes when the slice goes.
Without, it offers --cpu, --memory, --pods and --resource, enforced by no
one but the provider's Quotas, and the storage classes --storage-classes
names: use a slice where you can. It reaches the provider with the
credentials of this cluster's Identity (or those of the Secret
--kubeconfig-secret-name, in the provider's tenant namespace). With --wait
(the default) the command returns once the node is Ready; with --output it
prints the VirtualNode instead of creating it.

A volume claimed for a pod on the node whose liqo.io/remote-storage-class
annotation names a storage class the node does not offer stays Pending,
with an Event naming those it offers.`,
		Example: `  liqoctl create virtualnode mynode --remote-cluster-id milan --resource-slice-name pool
  liqoctl create virtualnode small --remote-cluster-id milan --cpu 1 --memory 2Gi --pods 10 --labels tier=small
  liqoctl create virtualnode fast --remote-cluster-id milan --resource-slice-name pool --storage-classes ssd`,
		Args: cobra.ExactArgs(1),
	}
	o.bind(cmd, "provider", false, 2*time.Minute)
	fs := cmd.Flags()
	o.res.bind(fs, "offer without --resource-slice-name")
	fs.StringVar(&o.sliceName, "resource-slice-name", "", "the ResourceSlice whose granted resources the node offers")
	fs.StringVar(&o.kubeconfigSecret, "kubeconfig-secret-name", "", "Secret (in the provider's tenant namespace) with the kubeconfig to reach the provider (default: the Identity's)")
	fs.StringArrayVar(&o.labels, "labels", nil, "label of the node, as key=value (repeatable)")
	fs.StringSliceVar(&o.storageClasses, "storage-classes", nil, "the provider's storage classes the node offers (with --resource-slice-name: some of those the provider reported; default: all of them)")
	fs.BoolVar(&o.createNode, "create-node", true, "create the Node (false: the VirtualNode is kept without a Node, and nothing runs for it)")
	fs.BoolVar(&o.wait, "wait", true, "wait until the node is Ready")
	o.print = output.NewObjectFlags("")
	o.print.AddFlags(cmd, "print the VirtualNode instead of creating it")
	cmd.MarkFlagsMutuallyExclusive("resource-slice-name", "kubeconfig-secret-name")
	addUnsupportedVirtualNodeFlags(fs)
	cmd.RunE = o.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
		return o.run(ctx, &output.Printer{W: cmd.OutOrStdout()}, args[0])
	})
	return cmd
}

func (o *virtualNodeOptions) run(ctx context.Context, out *output.Printer, name string) error {
	labels, err := parseLabels(o.labels)
	if err != nil {
		return err
	}
	c := o.cluster.Client
	ns := consts.TenantNamespace(o.remoteID)
	vn := &offv1beta1.VirtualNode{TypeMeta: metav1.TypeMeta{APIVersion: offv1beta1.GroupVersion.String(), Kind: "VirtualNode"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	var slice *authv1beta1.ResourceSlice
	if o.sliceName != "" {
		slice = &authv1beta1.ResourceSlice{}
		switch err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: o.sliceName}, slice); {
		case apierrors.IsNotFound(err):
			return fmt.Errorf("--resource-slice-name: no ResourceSlice %s of provider %s here (namespace %s): create it with liqoctl create resourceslice %s --remote-cluster-id %s --no-virtual-node",
				o.sliceName, o.remoteID, ns, o.sliceName, o.remoteID)
		case err != nil:
			return err
		}
		if !slice.Accepted() {
			return fmt.Errorf("--resource-slice-name: the provider has not granted ResourceSlice %s/%s any resources (see kubectl get resourceslice -n %s %s)",
				ns, o.sliceName, ns, o.sliceName)
		}
	}
	var reported []corev1beta1.StorageType
	if slice != nil {
		reported = slice.Status.StorageClasses
	}
	storageClasses, err := offeredStorageClasses(o.storageClasses, reported, slice != nil)
	if err != nil {
		return err
	}
	forgeVN := func() error {
		if slice != nil {
			vn.SetFromSlice(slice, o.remoteID)
			if err := controllerutil.SetOwnerReference(slice, vn, c.Scheme()); err != nil {
				return err
			}
		} else {
			capacity, err := o.res.requested()
			if err != nil {
				return err
			}
			// As a provider grants a slice not naming it: without it the
			// node would refuse every pod with an ephemeral-storage request.
			if _, ok := capacity[corev1.ResourceEphemeralStorage]; !ok {
				capacity[corev1.ResourceEphemeralStorage] = authv1beta1.DefaultResources()[corev1.ResourceEphemeralStorage]
			}
			vn.Labels = map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.RemoteClusterIDLabel: o.remoteID}
			vn.Spec.ClusterID = corev1beta1.ClusterID(o.remoteID)
			vn.Spec.KubeconfigSecretRef = &corev1.LocalObjectReference{Name: consts.KubeconfigSecretName(consts.IdentityName(o.remoteID))}
			vn.Spec.ResourceQuota.Hard = capacity
		}
		if o.kubeconfigSecret != "" {
			vn.Spec.KubeconfigSecretRef = &corev1.LocalObjectReference{Name: o.kubeconfigSecret}
		}
		vn.Spec.CreateNode = ptr.To(o.createNode)
		if storageClasses != nil {
			vn.Spec.StorageClasses = storageClasses
		}
		for k, v := range labels {
			if vn.Spec.Labels == nil {
				vn.Spec.Labels = map[string]string{}
			}
			vn.Spec.Labels[k] = v
		}
		return nil
	}
	if o.print.Requested() {
		if err := forgeVN(); err != nil {
			return err
		}
		return o.print.PrintObject(out.W, vn)
	}
	if o.kubeconfigSecret == "" {
		if err := requireIdentity(ctx, c, o.remoteID); err != nil {
			return err
		}
	} else if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: o.kubeconfigSecret}, &corev1.Secret{}); err != nil {
		return fmt.Errorf("--kubeconfig-secret-name: reading Secret %s/%s: %w", ns, o.kubeconfigSecret, err)
	}
	if err := checkNodeName(ctx, c, name, o.remoteID); err != nil {
		return err
	}
	out.Step("Creating VirtualNode %s/%s", ns, name)
	if _, err := peering.Apply(ctx, c, vn, forgeVN); err != nil {
		return fmt.Errorf("creating VirtualNode %s/%s: %w", ns, name, err)
	}
	out.Info("VirtualNode created")
	if !o.wait || !o.createNode {
		return nil
	}
	return peering.WaitVirtualNode(ctx, c, out, name, vn.Spec.ResourceQuota.Hard)
}

// addUnsupportedVirtualNodeFlags adds the reference's create virtualnode
// flags whose settings nothing here reads: given, they would change nothing,
// so they are refused (or, for the network check, ignored) saying why.
func addUnsupportedVirtualNodeFlags(fs *pflag.FlagSet) {
	fs.Bool("disable-network-check", false, "")
	compat.Ignore(fs, "disable-network-check", "the virtual node runs no network check here to disable")
	fs.StringToString("node-selector", nil, "")
	fs.String("runtime-class-name", "", "")
	fs.StringSlice("ingress-classes", nil, "")
	fs.StringSlice("load-balancer-classes", nil, "")
	fs.String("vk-options-template", "", "")
	for name, why := range map[string]string{
		"node-selector": "the VirtualNode's offloadingPatch is not applied to the remote pods here: the provider's scheduler places them " +
			"(a provider restricts its nodes for consumers itself)",
		"runtime-class-name": "the VirtualNode's offloadingPatch is not applied to the remote pods here: give runtimeClassName in the pods' own spec",
		"ingress-classes": "the class of a reflected Ingress is the provider's reflected-object policy's to allow (allowedIngressClasses), " +
			"not the virtual node's",
		"load-balancer-classes": "a reflected Service keeps the load-balancer class it names; the virtual node's classes are not read",
		"vk-options-template":   "there is no VkOptionsTemplate here: the virtual kubelets take their settings from the controller manager (the chart's values)",
	} {
		compat.Refuse(fs, name, why)
	}
}

// checkNodeName refuses a name a Node that does not stand for provider
// already has: the virtual node would take it over.
func checkNodeName(ctx context.Context, c client.Client, name, provider string) error {
	var n corev1.Node
	switch err := c.Get(ctx, types.NamespacedName{Name: name}, &n); {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	}
	if n.Labels[consts.TypeLabel] != consts.TypeVirtualNode || n.Labels[consts.RemoteClusterIDLabel] != provider {
		return fmt.Errorf("a Node named %s exists and is not a virtual node of %s: choose another name", name, provider)
	}
	return nil
}

// offeredStorageClasses returns the storage classes a virtual node offers
// for --storage-classes names, nil for none given (the slice's, or none).
// With a slice (fromSlice) they are some of those the provider reported,
// keeping which is its default; a class it did not report is refused, since
// PVCs asking for it would fail there. Pure.
func offeredStorageClasses(names []string, reported []corev1beta1.StorageType, fromSlice bool) ([]corev1beta1.StorageType, error) {
	if len(names) == 0 {
		return nil, nil
	}
	out := make([]corev1beta1.StorageType, 0, len(names))
	for _, name := range names {
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			return nil, fmt.Errorf("--storage-classes: %q is not a storage class name: %s", name, strings.Join(errs, "; "))
		}
		if slices.ContainsFunc(out, func(c corev1beta1.StorageType) bool { return c.StorageClassName == name }) {
			return nil, fmt.Errorf("--storage-classes: %s is given twice", name)
		}
		if !fromSlice {
			out = append(out, corev1beta1.StorageType{StorageClassName: name})
			continue
		}
		i := slices.IndexFunc(reported, func(c corev1beta1.StorageType) bool { return c.StorageClassName == name })
		if i < 0 {
			offered := "none"
			if len(reported) > 0 {
				names := make([]string, 0, len(reported))
				for _, c := range reported {
					names = append(names, c.StorageClassName)
				}
				offered = strings.Join(names, ", ")
			}
			return nil, fmt.Errorf("--storage-classes: the provider reported no storage class %s for the slice (it reported: %s)", name, offered)
		}
		out = append(out, reported[i])
	}
	return out, nil
}

func parseLabels(in []string) (map[string]string, error) {
	out := map[string]string{}
	for _, l := range in {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--labels %q is not of the form key=value", l)
		}
		out[k] = v
	}
	return out, nil
}

func newDeleteVirtualNodeCommand() *cobra.Command {
	o := &onePeer{}
	var waitGone bool
	cmd := &cobra.Command{
		Use:   "virtualnode NAME",
		Short: "Remove a virtual node made with liqoctl create virtualnode (on the consumer)",
		Long: `Delete the VirtualNode NAME: its Node goes, and the pods running on it are
evicted (their controllers recreate them elsewhere). A virtual node a
ResourceSlice made for itself is removed with that slice instead (liqoctl
delete resourceslice), or by recreating the slice with --no-virtual-node:
the command refuses it, since the slice would make it again. With --wait
(the default) the command returns once the node is gone.`,
		Example: `  liqoctl delete virtualnode mynode --remote-cluster-id milan`,
		Args:    cobra.ExactArgs(1),
	}
	o.bind(cmd, "provider", false, 2*time.Minute)
	cmd.Flags().BoolVar(&waitGone, "wait", true, "wait until the virtual node is gone")
	cmd.RunE = o.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
		out := &output.Printer{W: cmd.OutOrStdout()}
		c := o.cluster.Client
		vn := &offv1beta1.VirtualNode{}
		key := types.NamespacedName{Namespace: consts.TenantNamespace(o.remoteID), Name: args[0]}
		switch err := c.Get(ctx, key, vn); {
		case apierrors.IsNotFound(err):
			return fmt.Errorf("no VirtualNode %s of provider %s here (%s)", args[0], o.remoteID, key)
		case err != nil:
			return err
		}
		if owner := metav1.GetControllerOf(vn); owner != nil && owner.Kind == "ResourceSlice" {
			return fmt.Errorf("virtual node %s is the one ResourceSlice %s makes for itself, which would make it again: delete the slice (liqoctl delete resourceslice %s --remote-cluster-id %s)",
				args[0], owner.Name, owner.Name, o.remoteID)
		}
		out.Step("Deleting VirtualNode %s", key)
		if err := client.IgnoreNotFound(c.Delete(ctx, vn)); err != nil {
			return fmt.Errorf("deleting VirtualNode %s: %w", key, err)
		}
		if !waitGone {
			return nil
		}
		if err := waitVirtualNodeGone(ctx, c, vn); err != nil {
			return err
		}
		out.Info("Virtual node %s removed", args[0])
		return nil
	})
	return cmd
}
