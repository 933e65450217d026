package move

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"

	"github.com/liqo-go/liqo/pkg/consts"
)

// place is where a volume is: on a provider, or on a local node ("" when
// its PV names none).
type place struct {
	provider, node string
}

func (p place) remote() bool { return p.provider != "" }

func (p place) String() string {
	if p.remote() {
		return "cluster " + p.provider
	}
	if p.node == "" {
		return "the local cluster"
	}
	return "local node " + p.node
}

// Run moves the volume: checks, copies, verifies, then rebinds the PVC.
func (o *VolumeOptions) Run(ctx context.Context) error {
	if err := o.validate(); err != nil {
		return err
	}
	if err := o.Local.Connect(ctx, min(o.Timeout/4, 10*time.Second)); err != nil {
		return err
	}
	cs := o.Local.Clientset
	m := &mover{cs: cs, ns: o.Namespace, name: o.Name, o: o}
	pvc, pv, err := m.source(ctx)
	if err != nil {
		return err
	}
	from := placeOf(pv)
	to, err := m.target(ctx)
	if err != nil {
		return err
	}
	switch {
	case from == to:
		return fmt.Errorf("PVC %s/%s is already on %s", o.Namespace, o.Name, to)
	case from.remote() && to.remote():
		return fmt.Errorf("PVC %s/%s is on %s: moving between two providers is not supported; move it to a local node first", o.Namespace, o.Name, from)
	}
	if err := m.unused(ctx); err != nil {
		return err
	}
	if err := m.noLeftover(ctx); err != nil {
		return err
	}
	m.spec = reusable(pvc)
	o.out.Step("Moving the volume of PVC %s/%s (PV %s) from %s to %s", o.Namespace, o.Name, pv.Name, from, to)
	if to.remote() {
		return m.toProvider(ctx, pv)
	}
	return m.toLocal(ctx, pv, from)
}

func (o *VolumeOptions) validate() error {
	if errs := validation.IsDNS1123Subdomain(o.Name); len(errs) > 0 {
		return fmt.Errorf("%q is not a valid PVC name: %s", o.Name, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
		return fmt.Errorf("%q is not a valid namespace name: %s", o.Namespace, strings.Join(errs, "; "))
	}
	if o.TargetNode == "" {
		return errors.New("--target-node is required: a local node or a virtual node")
	}
	if o.MoverImage == "" {
		return errors.New("--mover-image is required")
	}
	if err := checkResources(o.Resources); err != nil {
		return err
	}
	if o.ConnectTimeout <= 0 {
		return errors.New("--connect-timeout must be positive")
	}
	return nil
}

// mover carries one move's state.
type mover struct {
	cs       kubernetes.Interface
	ns, name string
	o        *VolumeOptions
	// spec is the PVC as the user made it, to make it again.
	spec *corev1.PersistentVolumeClaim
}

// source reads the PVC and its PV, which must be the storage fabric's.
func (m *mover) source(ctx context.Context) (*corev1.PersistentVolumeClaim, *corev1.PersistentVolume, error) {
	pvc, err := m.cs.CoreV1().PersistentVolumeClaims(m.ns).Get(ctx, m.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil, fmt.Errorf("PVC %s/%s does not exist%s", m.ns, m.name, m.kept(ctx))
	} else if err != nil {
		return nil, nil, err
	}
	if pvc.Status.Phase != corev1.ClaimBound || pvc.Spec.VolumeName == "" {
		return nil, nil, fmt.Errorf("PVC %s/%s is %s: only a bound volume can be moved (it is bound where its first pod runs)", m.ns, m.name, pvc.Status.Phase)
	}
	pv, err := m.cs.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("reading PV %s of PVC %s/%s: %w", pvc.Spec.VolumeName, m.ns, m.name, err)
	}
	if pv.Annotations[consts.RemoteClusterAnnotation] == "" && pv.Annotations[consts.RealPVCAnnotation] == "" {
		return nil, nil, fmt.Errorf("PVC %s/%s is not a volume of the liqo StorageClass (class %q): only those can be moved",
			m.ns, m.name, ptrString(pvc.Spec.StorageClassName))
	}
	return pvc, pv, nil
}

// target reads the target node.
func (m *mover) target(ctx context.Context) (place, error) {
	node, err := m.cs.CoreV1().Nodes().Get(ctx, m.o.TargetNode, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return place{}, fmt.Errorf("node %q does not exist in the local cluster", m.o.TargetNode)
	} else if err != nil {
		return place{}, err
	}
	if node.Labels[consts.TypeLabel] == consts.TypeVirtualNode {
		p := node.Labels[consts.RemoteClusterIDLabel]
		if p == "" {
			return place{}, fmt.Errorf("virtual node %s names no remote cluster", node.Name)
		}
		return place{provider: p}, nil
	}
	return place{node: node.Name}, nil
}

// placeOf is where pv's data is.
func placeOf(pv *corev1.PersistentVolume) place {
	if p := pv.Annotations[consts.RemoteClusterAnnotation]; p != "" {
		return place{provider: p}
	}
	if a := pv.Spec.NodeAffinity; a != nil && a.Required != nil {
		for _, t := range a.Required.NodeSelectorTerms {
			for _, e := range t.MatchExpressions {
				if e.Key == corev1.LabelHostname && e.Operator == corev1.NodeSelectorOpIn && len(e.Values) == 1 {
					return place{node: e.Values[0]}
				}
			}
		}
	}
	return place{}
}

// unused refuses while a pod uses the PVC: its writes during the copy
// would be lost.
func (m *mover) unused(ctx context.Context) error {
	pods, err := m.cs.CoreV1().Pods(m.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing the pods of namespace %s: %w", m.ns, err)
	}
	var users []string
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		for _, v := range p.Spec.Volumes {
			if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == m.name {
				users = append(users, p.Name)
			}
		}
	}
	if len(users) > 0 {
		return fmt.Errorf("PVC %s/%s is in use by pod(s) %s: stop them first (scale their workload to zero), so that nothing writes during the move",
			m.ns, m.name, strings.Join(users, ", "))
	}
	return nil
}

// reusable is pvc as the user asked for it: what makes it again, bound
// anew (no volume, no binding annotations).
func reusable(pvc *corev1.PersistentVolumeClaim) *corev1.PersistentVolumeClaim {
	out := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{
		Name: pvc.Name, Namespace: pvc.Namespace, Labels: pvc.Labels, Annotations: map[string]string{}}}
	for k, v := range pvc.Annotations {
		if strings.HasPrefix(k, "pv.kubernetes.io/") || strings.HasPrefix(k, "volume.kubernetes.io/") ||
			strings.HasPrefix(k, "volume.beta.kubernetes.io/") || k == corev1.LastAppliedConfigAnnotation {
			continue
		}
		out.Annotations[k] = v
	}
	out.Spec = corev1.PersistentVolumeClaimSpec{
		AccessModes:      pvc.Spec.AccessModes,
		Resources:        pvc.Spec.Resources,
		VolumeMode:       pvc.Spec.VolumeMode,
		StorageClassName: pvc.Spec.StorageClassName,
	}
	return out
}

func ptrString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// noLeftover refuses while the temporary PVC of a move exists: an
// interrupted move left it, bound to a volume with data, which this move
// must not delete.
func (m *mover) noLeftover(ctx context.Context) error {
	tmp := m.name + tmpSuffix
	_, err := m.cs.CoreV1().PersistentVolumeClaims(m.ns).Get(ctx, tmp, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	return fmt.Errorf("PVC %s/%s exists, left by an interrupted move of %s: it may hold the only copy of the data; "+
		"check its volume, then delete it to move again%s", m.ns, tmp, m.name, m.kept(ctx))
}

// kept names the PVs an interrupted move of the PVC kept (see setReclaim),
// as a sentence to append to an error.
func (m *mover) kept(ctx context.Context) string {
	pvs, err := m.cs.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return ""
	}
	var names []string
	for _, pv := range pvs.Items {
		if pv.Annotations[movingAnnotation] == m.ns+"/"+m.name {
			names = append(names, fmt.Sprintf("%s (%s)", pv.Name, pv.Status.Phase))
		}
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("; a move of it kept its data in PV %s, reclaim policy Retain: bind a PVC to it (spec.volumeName) to use it", strings.Join(names, ", "))
}
