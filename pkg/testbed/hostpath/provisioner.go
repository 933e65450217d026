// Package hostpath is the testbed clusters' storage: a provisioner of
// hostPath volumes, built on the sig-storage external provisioner library,
// behind each cluster's default StorageClass. The real nodes share the
// host's filesystem, so the testbed process creates each volume's
// directory itself, under the cluster's directory, and the PV's node
// affinity keeps the pods that use it on the node it was made for.
package hostpath

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

const (
	// ProvisionerName is the StorageClass provisioner it serves.
	ProvisionerName = "testbed.liqo.io/hostpath"
	// ClassName is the cluster's default StorageClass.
	ClassName = "standard"
	// RoundUpParameter, a StorageClass parameter, rounds each volume's
	// size up to a multiple of its quantity (as cloud disks come in whole
	// GiB): a class whose volumes are bigger than asked.
	RoundUpParameter = "roundUpTo"
)

// Capacity is the size of a volume of a class with params for request:
// the request, rounded up as RoundUpParameter says. Pure.
func Capacity(request resource.Quantity, params map[string]string) (resource.Quantity, error) {
	s, ok := params[RoundUpParameter]
	if !ok {
		return request, nil
	}
	unit, err := resource.ParseQuantity(s)
	if err != nil || unit.Value() <= 0 {
		return request, fmt.Errorf("StorageClass parameter %s=%q: want a positive quantity such as 64Mi", RoundUpParameter, s)
	}
	n := (request.Value() + unit.Value() - 1) / unit.Value()
	return *resource.NewQuantity(n*unit.Value(), resource.BinarySI), nil
}

// Provisioner makes a directory per volume under Root/<node>/<PV name>.
type Provisioner struct {
	Root string
}

var _ controller.Provisioner = (*Provisioner)(nil)

// Provision creates the directory of the PVC's volume on the node its first
// pod was scheduled to (the class binds on the first consumer).
func (p *Provisioner) Provision(_ context.Context, o controller.ProvisionOptions) (*corev1.PersistentVolume, controller.ProvisioningState, error) {
	if o.SelectedNodeName == "" {
		return nil, controller.ProvisioningFinished, fmt.Errorf("StorageClass %s binds on the first consumer: no node was selected for PVC %s/%s",
			o.StorageClass.Name, o.PVC.Namespace, o.PVC.Name)
	}
	size, err := Capacity(o.PVC.Spec.Resources.Requests[corev1.ResourceStorage], o.StorageClass.Parameters)
	if err != nil {
		return nil, controller.ProvisioningFinished, err
	}
	node := o.SelectedNodeName
	if err := checkName(node); err != nil {
		return nil, controller.ProvisioningFinished, err
	}
	dir := filepath.Join(p.Root, node, o.PVName)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, controller.ProvisioningFinished, fmt.Errorf("creating the volume's directory: %w", err)
	}
	// Containers of any user write there, as on a fresh disk.
	if err := os.Chmod(dir, 0o777); err != nil {
		return nil, controller.ProvisioningFinished, err
	}
	reclaim := corev1.PersistentVolumeReclaimDelete
	if o.StorageClass.ReclaimPolicy != nil {
		reclaim = *o.StorageClass.ReclaimPolicy
	}
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: o.PVName},
		Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeReclaimPolicy: reclaim,
			AccessModes:                   o.PVC.Spec.AccessModes,
			VolumeMode:                    o.PVC.Spec.VolumeMode,
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: dir, Type: ptr.To(corev1.HostPathDirectoryOrCreate)},
			},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
			}}}},
		},
	}, controller.ProvisioningFinished, nil
}

// Delete removes the volume's directory, and only a directory of this
// provisioner's root.
func (p *Provisioner) Delete(_ context.Context, pv *corev1.PersistentVolume) error {
	if pv.Spec.HostPath == nil {
		return &controller.IgnoredError{Reason: "not a hostPath volume"}
	}
	rel, err := filepath.Rel(p.Root, pv.Spec.HostPath.Path)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") || len(strings.Split(rel, string(filepath.Separator))) != 2 {
		return &controller.IgnoredError{Reason: fmt.Sprintf("%s is not a volume of %s", pv.Spec.HostPath.Path, p.Root)}
	}
	if err := os.RemoveAll(pv.Spec.HostPath.Path); err != nil {
		return fmt.Errorf("removing the volume's directory: %w", err)
	}
	return nil
}

// checkName refuses a node name that would leave the root.
func checkName(node string) error {
	if node == "" || node == "." || node == ".." || strings.ContainsAny(node, `/\`) {
		return fmt.Errorf("node name %q cannot name a directory", node)
	}
	return nil
}

// Run creates the default StorageClass and provisions its volumes until ctx
// ends.
func Run(ctx context.Context, cs kubernetes.Interface, root string) error {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	class := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: ClassName, Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner:       ProvisionerName,
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
	}
	if _, err := cs.StorageV1().StorageClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating StorageClass %s: %w", ClassName, err)
	}
	pc := controller.NewProvisionController(ctx, cs, ProvisionerName, &Provisioner{Root: root},
		controller.LeaderElection(false), controller.Threadiness(2))
	pc.Run(ctx)
	if ctx.Err() == nil {
		return errors.New("the hostPath provisioner stopped")
	}
	return nil
}
