package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/remotecluster"
	"github.com/liqo-go/liqo/pkg/storage/provision"
)

// Provisioner provisions the virtual StorageClass's volumes.
type Provisioner struct {
	// Reader reads Nodes, NamespaceMaps and the real PVCs and PVs.
	Reader client.Reader
	// Writer creates and deletes the real PVCs.
	Writer  client.Writer
	Remotes *remotecluster.Registry
	Options Options
	// ClusterID is this cluster's: the remote PVCs carry it as their
	// origin, which providers require of what a consumer marks as liqo's.
	ClusterID string
}

var _ provision.Provisioner = (*Provisioner)(nil)

// Provision backs the PVC on the node its first pod was scheduled to.
func (p *Provisioner) Provision(ctx context.Context, o provision.Options) (*corev1.PersistentVolume, provision.State, error) {
	if o.SelectedNodeName == "" {
		return nil, provision.Finished, fmt.Errorf("StorageClass %s binds on the first consumer: no node was selected", o.StorageClass.Name)
	}
	var node corev1.Node
	if err := p.Reader.Get(ctx, types.NamespacedName{Name: o.SelectedNodeName}, &node); err != nil {
		return nil, provision.NoChange, fmt.Errorf("reading node %s: %w", o.SelectedNodeName, err)
	}
	if node.Labels[consts.TypeLabel] == consts.TypeVirtualNode {
		return p.provisionRemote(ctx, o, node.Labels[consts.RemoteClusterIDLabel])
	}
	return p.provisionLocal(ctx, o)
}

// provisionRemote makes the PVC of the same name in the twin namespace on
// provider and returns a placeholder PV pinned to provider's virtual
// nodes: nothing mounts it here, the remote pod mounts the remote PVC.
func (p *Provisioner) provisionRemote(ctx context.Context, o provision.Options, provider string) (*corev1.PersistentVolume, provision.State, error) {
	if provider == "" {
		return nil, provision.Finished, fmt.Errorf("virtual node %s names no remote cluster", o.SelectedNodeName)
	}
	var vn offv1beta1.VirtualNode
	if err := p.Reader.Get(ctx, types.NamespacedName{Namespace: consts.TenantNamespace(provider), Name: o.SelectedNodeName}, &vn); err != nil {
		return nil, provision.NoChange, fmt.Errorf("reading the VirtualNode %s: %w", o.SelectedNodeName, err)
	}
	if err := CheckRemoteClass(o.PVC, provider, vn.Spec.StorageClasses); err != nil {
		// Final: the PVC stays Pending, with this as its Event, until
		// its annotation names a class the provider offers.
		return nil, provision.Finished, err
	}
	var nm offv1beta1.NamespaceMap
	if err := p.Reader.Get(ctx, consts.NamespaceMapKey(provider), &nm); err != nil {
		return nil, provision.NoChange, fmt.Errorf("reading the namespace map of %s: %w", provider, err)
	}
	twin := nm.Status.CurrentMapping[o.PVC.Namespace].RemoteNamespace
	if twin == "" {
		return nil, provision.NoChange, fmt.Errorf("namespace %s has no twin namespace on %s yet", o.PVC.Namespace, provider)
	}
	conn, err := p.Remotes.Get(ctx, provider)
	if err != nil {
		return nil, provision.NoChange, err
	}
	want := RemotePVC(o.PVC, twin, p.ClusterID)
	pvcs := conn.Clientset.CoreV1().PersistentVolumeClaims(twin)
	if _, err := pvcs.Create(ctx, want, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, provision.NoChange, fmt.Errorf("creating PVC %s/%s on %s: %w", twin, want.Name, provider, err)
	}
	pv := placeholderPV(o, provider)
	pv.Annotations = map[string]string{consts.RemoteClusterAnnotation: provider, consts.RemoteNamespaceAnnotation: twin}
	return pv, provision.Finished, nil
}

// CheckRemoteClass refuses a PVC whose liqo.io/remote-storage-class the
// provider does not offer (as its ResourceSlice says), naming those it
// does. A provider that advertised none is not checked. Pure.
func CheckRemoteClass(pvc *corev1.PersistentVolumeClaim, provider string, offered []corev1beta1.StorageType) error {
	want := pvc.Annotations[consts.RemoteStorageClassAnnotation]
	if want == "" || len(offered) == 0 {
		return nil
	}
	names := make([]string, 0, len(offered))
	for _, c := range offered {
		if c.StorageClassName == want {
			return nil
		}
		name := c.StorageClassName
		if c.Default {
			name += " (default)"
		}
		names = append(names, name)
	}
	return fmt.Errorf("provider %s offers no storage class %q (annotation %s); it offers %s",
		provider, want, consts.RemoteStorageClassAnnotation, strings.Join(names, ", "))
}

// RemotePVC is the provider's PVC for a local one: its size, access modes
// and volume mode, the class the annotation names (else the provider's
// default), and nothing that binds it to a given volume; marked as
// liqo's, from origin (this cluster). Pure.
func RemotePVC(local *corev1.PersistentVolumeClaim, twin, origin string) *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: local.Name, Namespace: twin,
			Labels: map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.OriginClusterIDLabel: origin}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: local.Spec.AccessModes,
			VolumeMode:  local.Spec.VolumeMode,
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: local.Spec.Resources.Requests[corev1.ResourceStorage]}},
		},
	}
	if class := local.Annotations[consts.RemoteStorageClassAnnotation]; class != "" {
		pvc.Spec.StorageClassName = ptr.To(class)
	}
	return pvc
}

// placeholderPV is the local PV of a remote volume: its size as asked,
// pinned to provider's virtual nodes. Its hostPath is never mounted (no
// kubelet runs there).
func placeholderPV(o provision.Options, provider string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: o.PVName},
		Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeReclaimPolicy: reclaimPolicy(o),
			AccessModes:                   o.PVC.Spec.AccessModes,
			VolumeMode:                    o.PVC.Spec.VolumeMode,
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: o.PVC.Spec.Resources.Requests[corev1.ResourceStorage]},
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/liqo/remote/" + o.PVName},
			},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: consts.RemoteClusterIDLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{provider}}},
			}}}},
		},
	}
}

func reclaimPolicy(o provision.Options) corev1.PersistentVolumeReclaimPolicy {
	if o.StorageClass.ReclaimPolicy != nil {
		return *o.StorageClass.ReclaimPolicy
	}
	return corev1.PersistentVolumeReclaimDelete
}

// provisionLocal backs the PVC with a real PVC of the real class in the
// storage namespace, bound on the same node, and returns a PV with the
// real PV's source and node affinity.
func (p *Provisioner) provisionLocal(ctx context.Context, o provision.Options) (*corev1.PersistentVolume, provision.State, error) {
	key := types.NamespacedName{Namespace: p.Options.Namespace, Name: string(o.PVC.UID)}
	var real corev1.PersistentVolumeClaim
	switch err := p.Reader.Get(ctx, key, &real); {
	case apierrors.IsNotFound(err):
		real = corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace,
				Labels: map[string]string{consts.ManagedByLabel: consts.ManagedByValue,
					VirtualPVCNamespaceLabel: o.PVC.Namespace, VirtualPVCNameLabel: o.PVC.Name},
				Annotations: map[string]string{provision.AnnSelectedNode: o.SelectedNodeName}},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: o.PVC.Spec.AccessModes,
				VolumeMode:  o.PVC.Spec.VolumeMode,
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: o.PVC.Spec.Resources.Requests[corev1.ResourceStorage]}},
			},
		}
		if p.Options.RealClass != "" {
			real.Spec.StorageClassName = ptr.To(p.Options.RealClass)
		}
		if err := p.Writer.Create(ctx, &real); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, provision.NoChange, fmt.Errorf("creating the real PVC %s: %w", key, err)
		}
		return nil, provision.InBackground, fmt.Errorf("waiting for the real PVC %s to bind", key)
	case err != nil:
		return nil, provision.NoChange, err
	}
	if real.Spec.VolumeName == "" || real.Status.Phase != corev1.ClaimBound {
		return nil, provision.InBackground, fmt.Errorf("waiting for the real PVC %s to bind", key)
	}
	var realPV corev1.PersistentVolume
	if err := p.Reader.Get(ctx, types.NamespacedName{Name: real.Spec.VolumeName}, &realPV); err != nil {
		return nil, provision.InBackground, fmt.Errorf("reading the real PV %s: %w", real.Spec.VolumeName, err)
	}
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: o.PVName, Annotations: map[string]string{consts.RealPVCAnnotation: key.String()}},
		Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeReclaimPolicy: reclaimPolicy(o),
			AccessModes:                   o.PVC.Spec.AccessModes,
			VolumeMode:                    o.PVC.Spec.VolumeMode,
			Capacity:                      realPV.Spec.Capacity,
			PersistentVolumeSource:        realPV.Spec.PersistentVolumeSource,
			NodeAffinity:                  realPV.Spec.NodeAffinity,
			MountOptions:                  realPV.Spec.MountOptions,
		},
	}, provision.Finished, nil
}

// Delete removes what backs the PV: the remote PVC, or the real one (whose
// own class then reclaims the data).
func (p *Provisioner) Delete(ctx context.Context, pv *corev1.PersistentVolume) error {
	if provider := pv.Annotations[consts.RemoteClusterAnnotation]; provider != "" {
		conn, err := p.Remotes.Get(ctx, provider)
		if err != nil {
			return fmt.Errorf("reaching %s to delete the remote PVC: %w", provider, err)
		}
		ref := pv.Spec.ClaimRef
		if ref == nil {
			return errors.New("the PV has no claim, so no remote PVC to delete")
		}
		err = conn.Clientset.CoreV1().PersistentVolumeClaims(pv.Annotations[consts.RemoteNamespaceAnnotation]).Delete(ctx, ref.Name, metav1.DeleteOptions{})
		return client.IgnoreNotFound(err)
	}
	if real := pv.Annotations[consts.RealPVCAnnotation]; real != "" {
		ns, name, ok := strings.Cut(real, "/")
		if !ok || ns == "" || name == "" {
			return fmt.Errorf("annotation %s=%q is not namespace/name", consts.RealPVCAnnotation, real)
		}
		return client.IgnoreNotFound(p.Writer.Delete(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}))
	}
	return &provision.IgnoredError{Reason: "not a volume of the virtual StorageClass"}
}
