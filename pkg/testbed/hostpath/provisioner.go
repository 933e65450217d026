// Package hostpath is the testbed clusters' storage: a provisioner of
// hostPath volumes, a controller of package provision in a small
// controller-runtime manager of its own, behind each cluster's default
// StorageClass. The real nodes share the host's filesystem, so the
// testbed process creates each volume's directory itself, under the
// cluster's directory, and the PV's node affinity keeps the pods that use
// it on the node it was made for.
package hostpath

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/liqo-go/liqo/pkg/storage/provision"
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

var _ provision.Provisioner = (*Provisioner)(nil)

// Provision creates the directory of the PVC's volume on the node its first
// pod was scheduled to (the class binds on the first consumer).
func (p *Provisioner) Provision(_ context.Context, o provision.Options) (*corev1.PersistentVolume, provision.State, error) {
	if o.SelectedNodeName == "" {
		return nil, provision.Finished, fmt.Errorf("StorageClass %s binds on the first consumer: no node was selected for PVC %s/%s",
			o.StorageClass.Name, o.PVC.Namespace, o.PVC.Name)
	}
	size, err := Capacity(o.PVC.Spec.Resources.Requests[corev1.ResourceStorage], o.StorageClass.Parameters)
	if err != nil {
		return nil, provision.Finished, err
	}
	node := o.SelectedNodeName
	if err := checkName(node); err != nil {
		return nil, provision.Finished, err
	}
	dir := filepath.Join(p.Root, node, o.PVName)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, provision.Finished, fmt.Errorf("creating the volume's directory: %w", err)
	}
	// Containers of any user write there, as on a fresh disk.
	if err := os.Chmod(dir, 0o777); err != nil {
		return nil, provision.Finished, err
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
	}, provision.Finished, nil
}

// Delete removes the volume's directory, and only a directory of this
// provisioner's root.
func (p *Provisioner) Delete(_ context.Context, pv *corev1.PersistentVolume) error {
	if pv.Spec.HostPath == nil {
		return &provision.IgnoredError{Reason: "not a hostPath volume"}
	}
	rel, err := filepath.Rel(p.Root, pv.Spec.HostPath.Path)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") || len(strings.Split(rel, string(filepath.Separator))) != 2 {
		return &provision.IgnoredError{Reason: fmt.Sprintf("%s is not a volume of %s", pv.Spec.HostPath.Path, p.Root)}
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
// ends, logging to ctx's logger. It runs a manager of its own, with a
// scheme of its own: a test binary runs one per testbed cluster, next to
// controller managers, and none may write a scheme another reads.
func Run(ctx context.Context, cfg *rest.Config, root string) error {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	// client-go's types registered in this scheme, not client-go's scheme.
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  scheme,
		Logger:  klog.FromContext(ctx),
		Metrics: metricsserver.Options{BindAddress: "0"},
		// One per cluster in a process: the controllers' names repeat.
		Controller:              config.Controller{SkipNameValidation: ptr.To(true)},
		GracefulShutdownTimeout: ptr.To(5 * time.Second),
	})
	if err != nil {
		return err
	}
	class := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: ClassName, Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner:       ProvisionerName,
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
	}
	// The manager's client reads from its cache, which starts with it:
	// this write goes straight to the API server.
	cl, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	if err := cl.Create(ctx, class); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating StorageClass %s: %w", ClassName, err)
	}
	c := &provision.Controller{Name: "hostpath-provisioner", ProvisionerName: ProvisionerName, Provisioner: &Provisioner{Root: root}, Workers: 2}
	if err := c.SetupWithManager(mgr); err != nil {
		return err
	}
	if err := mgr.Start(ctx); err != nil {
		return err
	}
	if ctx.Err() == nil {
		return errors.New("the hostPath provisioner stopped")
	}
	return nil
}
