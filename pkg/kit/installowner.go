package kit

import (
	"context"
	"fmt"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// InstallOwner ties what the controller manager makes for the install as a
// whole (the fabric agent, the gateways' node binding, the webhook's
// serving keys, the local CIDRs' Networks) to an object of the Helm
// release, the manager's own ClusterRole: when `helm uninstall` removes
// the release, the garbage collector removes them too, with no hook to
// run. Per-peering objects are not owned: unpeering removes them.
//
// The zero value owns nothing, for a manager started without the chart
// (--self-provision), which nothing uninstalls.
type InstallOwner struct {
	ref *metav1.OwnerReference
}

// NewInstallOwner reads the ClusterRole named clusterRole; "" gives the
// zero InstallOwner.
func NewInstallOwner(ctx context.Context, cs kubernetes.Interface, clusterRole string) (InstallOwner, error) {
	if clusterRole == "" {
		return InstallOwner{}, nil
	}
	r, err := cs.RbacV1().ClusterRoles().Get(ctx, clusterRole, metav1.GetOptions{})
	if err != nil {
		return InstallOwner{}, fmt.Errorf("reading ClusterRole %s, the owner of what the manager makes for the install: %w", clusterRole, err)
	}
	// Neither controller nor blocking: the owner is only a lifetime, and
	// blocking its deletion would need rights on it the manager lacks.
	return InstallOwner{ref: &metav1.OwnerReference{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole", Name: r.Name, UID: r.UID}}, nil
}

// Own adds the install's owner reference to obj, once. It reports whether
// obj changed.
func (o InstallOwner) Own(obj metav1.Object) bool {
	if o.ref == nil {
		return false
	}
	refs := obj.GetOwnerReferences()
	if slices.ContainsFunc(refs, func(r metav1.OwnerReference) bool { return r.UID == o.ref.UID }) {
		return false
	}
	obj.SetOwnerReferences(append(refs, *o.ref))
	return true
}
