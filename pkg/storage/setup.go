package storage

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/remotecluster"
	"github.com/liqo-go/liqo/pkg/storage/provision"
)

// Setup adds the provisioner's controllers to the manager, which runs them
// on the leader only, with its client, cache and event recorder.
// selfProvision creates the virtual StorageClass and the storage namespace
// first (on cs, the manager's local clientset, also on the leader only),
// as the chart does in a cluster.
func Setup(mgr ctrl.Manager, cs kubernetes.Interface, o Options, remotes *remotecluster.Registry, clusterID string, selfProvision bool) error {
	if !o.Enabled {
		return nil
	}
	if selfProvision {
		if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error { return ensureObjects(ctx, cs, o) })); err != nil {
			return err
		}
	}
	p := &Provisioner{Reader: mgr.GetAPIReader(), Writer: mgr.GetClient(), Remotes: remotes, Options: o, ClusterID: clusterID}
	return (&provision.Controller{Name: "liqo-storage", ProvisionerName: ProvisionerName, Provisioner: p, Workers: 4}).SetupWithManager(mgr)
}

// VirtualClass is the virtual StorageClass.
func VirtualClass(name string) *storagev1.StorageClass {
	return &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: name, Labels: map[string]string{consts.ManagedByLabel: consts.ManagedByValue}},
		Provisioner:       ProvisionerName,
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
	}
}

func ensureObjects(ctx context.Context, cs kubernetes.Interface, o Options) error {
	if _, err := cs.StorageV1().StorageClasses().Create(ctx, VirtualClass(o.VirtualClass), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating StorageClass %s: %w", o.VirtualClass, err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.Namespace, Labels: map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.StorageNamespaceLabel: "true"}}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", o.Namespace, err)
	}
	return nil
}
