package peeringuser

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
	"github.com/liqo-go/liqo/pkg/wait"
)

// DeleteOptions select the peering users Delete removes.
type DeleteOptions struct {
	// Consumer selects the users bound to or claimed by this cluster ID.
	Consumer string
	// Unclaimed selects the generic users nobody has claimed.
	Unclaimed bool
	Out       *output.Printer
}

// Delete removes the selected peering users: their ServiceAccount and
// token Secret (the token stops working at once), claim, roles and
// bindings, and their tenant namespace unless a peering lives in it
// (then it is kept, without the user's label, for unpeer to remove). A
// peering made with the user is not undone. The policy and its binding
// stay (see Policy): they do nothing without users.
func Delete(ctx context.Context, c *factory.Cluster, o DeleteOptions) error {
	claims, err := listClaims(ctx, c.Client, c.Namespace)
	if err != nil {
		return err
	}
	var users []spec
	for _, cm := range claims {
		u, ok := userOf(cm.Name)
		claim := cm.Data[ClaimKey]
		if ok && ((o.Unclaimed && claim == "") || (o.Consumer != "" && claim == o.Consumer)) {
			users = append(users, spec{user: u, namespace: c.Namespace, consumer: claim})
		}
	}
	if len(users) == 0 {
		if o.Unclaimed {
			o.Out.Info("No unclaimed peering user in namespace %s", c.Namespace)
			return nil
		}
		return fmt.Errorf("no peering user for cluster %q in namespace %s", o.Consumer, c.Namespace)
	}
	var errs []error
	for _, s := range users {
		if err := deleteUser(ctx, c.Client, s, o.Out); err != nil {
			errs = append(errs, fmt.Errorf("peering user %s: %w", Name(s.user), err))
		}
	}
	return errors.Join(errs...)
}

func deleteUser(ctx context.Context, c client.Client, s spec, p *output.Printer) error {
	// The token first: whatever fails after, the credential is revoked.
	objs := []client.Object{s.tokenSecret(), s.serviceAccount(), s.claimClusterRoleBinding(), s.claimClusterRole(),
		s.installRoleBinding(), s.installRole(false), s.tenantClusterRole(), s.claim()}
	ns := ""
	if s.consumer != "" {
		ns = consts.TenantNamespace(s.consumer)
		objs = append(objs, s.tenantRoleBinding(ns))
	}
	for _, obj := range objs {
		if err := c.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting %T %s: %w", obj, obj.GetName(), err)
		}
	}
	p.Info("Peering user %s/%s deleted: its token no longer works", s.namespace, Name(s.user))
	if ns == "" {
		return nil
	}
	return releaseTenantNamespace(ctx, c, ns, s, p)
}

// releaseTenantNamespace deletes the user's tenant namespace if no peering
// lives in it, or else drops the user's label so that unpeer removes it.
func releaseTenantNamespace(ctx context.Context, c client.Client, name string, s spec, p *output.Printer) error {
	ns := &corev1.Namespace{}
	if err := c.Get(ctx, types.NamespacedName{Name: name}, ns); err != nil {
		return client.IgnoreNotFound(err)
	}
	if ns.Labels[Label] != s.user {
		return nil
	}
	var tenants authv1beta1.TenantList
	var ids authv1beta1.IdentityList
	var slices authv1beta1.ResourceSliceList
	for _, l := range []client.ObjectList{&tenants, &ids, &slices} {
		if err := c.List(ctx, l, client.InNamespace(name)); err != nil {
			return fmt.Errorf("listing the peering objects in %s: %w", name, err)
		}
	}
	if n := len(tenants.Items) + len(ids.Items) + len(slices.Items); n > 0 {
		patch := client.MergeFrom(ns.DeepCopy())
		delete(ns.Labels, Label)
		if err := c.Patch(ctx, ns, patch); err != nil {
			return err
		}
		p.Warn("tenant namespace %s kept: it holds the peering with %s (%d Tenants, Identities and ResourceSlices); liqoctl unpeer removes it", name, s.consumer, n)
		return nil
	}
	if err := c.Delete(ctx, ns); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting the tenant namespace %s: %w", name, err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := wait.Gone(wctx, c, types.NamespacedName{Name: name}, &corev1.Namespace{}, "tenant namespace "+name); err != nil {
		p.Warn("tenant namespace %s is still being deleted", name)
		return nil
	}
	p.Info("Tenant namespace %s deleted", name)
	return nil
}
