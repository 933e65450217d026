package shadowpod

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager/ipam"
	"github.com/liqo-go/liqo/pkg/kit"
)

// DefaultWorkers is the number of ShadowPods reconciled in parallel when
// Reconciler.Workers is not set: a reconcile mostly waits on one API call,
// and offloading a large workload brings thousands at once.
const DefaultWorkers = 32

// Reconciler keeps, for every ShadowPod, the Pod of the same name and
// namespace.
//
// The Pod is created from the ShadowPod's spec and then left alone: a
// running Pod is never updated from a changed ShadowPod spec, because almost
// all of a pod spec is immutable and replacing a running Pod behind the
// consumer's back would restart its workload. The consumer replaces the
// ShadowPod to change a pod, as Kubernetes replaces pods.
type Reconciler struct {
	Client client.Client
	// Workers is the number of concurrent reconciles (DefaultWorkers if 0).
	Workers  int
	Recorder record.EventRecorder
	// NodeSelector restricts the provider's nodes its consumers' pods run
	// on (none: any node the scheduler picks).
	NodeSelector map[string]string

	// apiReader reads around the cache, in the one case where the cache
	// cannot answer: a Pod that exists but does not carry our labels.
	apiReader client.Reader
}

// Reconcile creates the ShadowPod's Pod when it is missing and mirrors its
// phase and readiness into the ShadowPod's status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var sp offv1beta1.ShadowPod
	if err := r.Client.Get(ctx, req.NamespacedName, &sp); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, r.deleteOrphan(ctx, req.NamespacedName)
		}
		return ctrl.Result{}, err
	}
	if !sp.DeletionTimestamp.IsZero() {
		// Recreating the Pod would only race the deletion of both.
		return ctrl.Result{}, nil
	}
	before := sp.DeepCopy()

	var pod corev1.Pod
	var err error
	switch getErr := r.Client.Get(ctx, req.NamespacedName, &pod); {
	case getErr == nil:
		r.observe(&sp, &pod)
	case apierrors.IsNotFound(getErr):
		err = r.create(ctx, &sp)
	default:
		return ctrl.Result{}, getErr
	}
	if werr := kit.PatchStatus(ctx, r.Client, &sp, before); werr != nil && err == nil {
		err = werr
	}
	return ctrl.Result{}, err
}

// deleteOrphan deletes the Pod of a deleted ShadowPod. The garbage
// collector would too, through the owner reference, but only once it
// watches ShadowPods, which it starts doing up to a discovery period (30 s)
// after the CRD appears; and a consumer waits for the remote pod to be gone
// before it lets its local pod go. The Pod's own grace period applies.
func (r *Reconciler) deleteOrphan(ctx context.Context, key types.NamespacedName) error {
	var pod corev1.Pod
	if err := r.Client.Get(ctx, key, &pod); err != nil {
		return client.IgnoreNotFound(err)
	}
	ref := metav1.GetControllerOf(&pod)
	if ref == nil || ref.Kind != "ShadowPod" || ref.APIVersion != offv1beta1.GroupVersion.String() || !pod.DeletionTimestamp.IsZero() {
		return nil
	}
	err := r.Client.Delete(ctx, &pod, client.Preconditions{UID: &pod.UID})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// create creates the Pod. Its status is not written from the create
// response: the Pod's own add event follows at once and writes it, and
// writing it here too would race that event and double the writes.
func (r *Reconciler) create(ctx context.Context, sp *offv1beta1.ShadowPod) error {
	existed := podExisted(&sp.Status)
	translate, err := ipam.PeerTranslate(ctx, r.Client, sp.Labels[consts.OriginClusterIDLabel])
	if err != nil {
		return err
	}
	err = r.Client.Create(ctx, ForgePod(sp, r.NodeSelector, translate))
	switch {
	case err == nil:
		if existed {
			r.Recorder.Eventf(sp, corev1.EventTypeNormal, EventPodRecreated, "Recreated pod %s, which had gone", sp.Name)
		} else {
			r.Recorder.Eventf(sp, corev1.EventTypeNormal, EventPodCreated, "Created pod %s", sp.Name)
		}
		return nil
	case apierrors.IsAlreadyExists(err):
		return r.existing(ctx, sp)
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		// The namespace is being deleted, the ShadowPod with it: nothing can
		// be created there any more, and retrying would only spin until the
		// namespace controller deletes the ShadowPod.
		log.FromContext(ctx).V(1).Info("not recreating the pod: its namespace is terminating")
		return nil
	}
	reason := ReasonCreationFailed
	if existed {
		reason = ReasonRecreationFailed
	}
	if readyReason(sp) != reason {
		r.Recorder.Eventf(sp, corev1.EventTypeWarning, EventCreationFailed, "Creating pod %s: %v", sp.Name, err)
	}
	notRunning(&sp.Status, reason, err.Error())
	if apierrors.IsInvalid(err) {
		// Retrying cannot help: only a new ShadowPod spec can, and its
		// update triggers a reconcile anyway. (The reconcile our status
		// write triggers tries once more; that is all.)
		return nil
	}
	return err
}

// existing handles a create that met a Pod the cache does not hold: the
// cache may lag behind our own earlier create, or the Pod lacks our labels,
// which the cache selects on. Only this rare path reads the API server.
func (r *Reconciler) existing(ctx context.Context, sp *offv1beta1.ShadowPod) error {
	var pod corev1.Pod
	if err := r.apiReader.Get(ctx, client.ObjectKeyFromObject(sp), &pod); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("pod %s/%s existed at create time and is gone now: retrying", sp.Namespace, sp.Name)
		}
		return err
	}
	if controlled(&pod, sp) && !hasOurLabels(&pod, sp) {
		// Someone removed our labels: the Pod fell out of the cache and none
		// of its events would reach us any more. Putting them back is a
		// metadata change, which does not touch the running containers.
		patch := client.MergeFrom(pod.DeepCopy())
		metav1.SetMetaDataLabel(&pod.ObjectMeta, consts.ManagedByLabel, consts.ManagedByValue)
		metav1.SetMetaDataLabel(&pod.ObjectMeta, ShadowPodLabel, LabelValue(sp.Name))
		if err := r.Client.Patch(ctx, &pod, patch); err != nil {
			return client.IgnoreNotFound(err)
		}
		r.Recorder.Eventf(sp, corev1.EventTypeNormal, EventLabelsRestored, "Restored the labels of pod %s", sp.Name)
	}
	r.observe(sp, &pod)
	return nil
}

// observe sets the status from an existing Pod with the ShadowPod's name:
// its own Pod is mirrored (a terminating one is waited for: its delete event
// brings us back to recreate it); any other Pod is left untouched. A
// conflict is looked at again on the next event of the ShadowPod, or of the
// other Pod if it is in the cache and claims a ShadowPod of that name as its
// controller (the Pod of a deleted ShadowPod the garbage collector has not
// removed yet): the controller does not poll for an unrelated Pod to go.
func (r *Reconciler) observe(sp *offv1beta1.ShadowPod, pod *corev1.Pod) {
	if controlled(pod, sp) {
		mirrorPod(&sp.Status, pod)
		return
	}
	owner := "no controller"
	if ref := metav1.GetControllerOf(pod); ref != nil {
		owner = fmt.Sprintf("controlled by %s %s (uid %s)", ref.Kind, ref.Name, ref.UID)
	}
	msg := fmt.Sprintf("pod %s exists with %s, not this ShadowPod (uid %s); it is left untouched", pod.Name, owner, sp.UID)
	if readyReason(sp) != ReasonNameConflict {
		r.Recorder.Event(sp, corev1.EventTypeWarning, EventNameConflict, msg)
	}
	notRunning(&sp.Status, ReasonNameConflict, msg)
}

func controlled(pod *corev1.Pod, sp *offv1beta1.ShadowPod) bool {
	ref := metav1.GetControllerOf(pod)
	return ref != nil && ref.UID == sp.UID
}

func hasOurLabels(pod *corev1.Pod, sp *offv1beta1.ShadowPod) bool {
	return pod.Labels[consts.ManagedByLabel] == consts.ManagedByValue && pod.Labels[ShadowPodLabel] == LabelValue(sp.Name)
}

func readyReason(sp *offv1beta1.ShadowPod) string {
	if c := meta.FindStatusCondition(sp.Status.Conditions, ConditionReady); c != nil {
		return c.Reason
	}
	return ""
}

// PodCache is the Pod entry of the cache options of a manager running this
// controller: only our Pods, or the manager would hold every Pod of the
// cluster in memory. ForgePod sets the label it selects on every Pod; a Pod
// outside the selection is only ever read, uncached, when a create collides
// with it.
func PodCache() cache.ByObject {
	return cache.ByObject{Label: labels.SelectorFromSet(labels.Set{consts.ManagedByLabel: consts.ManagedByValue})}
}

// SetupWithManager registers the controller. The manager's Pod cache must
// be restricted with PodCache.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil {
		r.Client = mgr.GetClient()
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorderFor("liqo-shadowpod")
	}
	r.apiReader = mgr.GetAPIReader()
	workers := r.Workers
	if workers <= 0 {
		workers = DefaultWorkers
	}
	return ctrl.NewControllerManagedBy(mgr).Named("shadowpod").
		For(&offv1beta1.ShadowPod{}, builder.WithPredicates(shadowPodChanged)).
		Owns(&corev1.Pod{}, builder.WithPredicates(podChanged)).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

// shadowPodChanged lets through the ShadowPod updates that matter: a new
// spec, a deletion, and a new status. Labels and annotations are copied at
// creation only, so their changes need no reconcile. Status changes, our own
// writes included, must pass: kit.PatchStatus compares with the cache, which can
// be a write behind; the reconcile that follows the write's arrival in the
// cache is what corrects a status decided on that stale view.
var shadowPodChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		old, ok1 := e.ObjectOld.(*offv1beta1.ShadowPod)
		cur, ok2 := e.ObjectNew.(*offv1beta1.ShadowPod)
		if !ok1 || !ok2 {
			return true
		}
		return old.Generation != cur.Generation || old.DeletionTimestamp.IsZero() != cur.DeletionTimestamp.IsZero() ||
			!equality.Semantic.DeepEqual(old.Status, cur.Status)
	},
}

// podChanged lets through the Pod updates that can change what the
// controller does or writes; the many others (scheduling, container
// statuses, IPs) would only cost a reconcile each.
var podChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		old, ok1 := e.ObjectOld.(*corev1.Pod)
		cur, ok2 := e.ObjectNew.(*corev1.Pod)
		if !ok1 || !ok2 {
			return true
		}
		return relevant(old) != relevant(cur)
	},
}

// podView is what the controller reads of a Pod.
type podView struct {
	phase                     corev1.PodPhase
	ready                     corev1.PodCondition
	terminating               bool
	controller                string
	managedBy, shadowPodLabel string
}

func relevant(p *corev1.Pod) podView {
	v := podView{
		phase:          p.Status.Phase,
		terminating:    !p.DeletionTimestamp.IsZero(),
		managedBy:      p.Labels[consts.ManagedByLabel],
		shadowPodLabel: p.Labels[ShadowPodLabel],
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			// Probe times change on every status report; only what is
			// mirrored counts.
			v.ready = corev1.PodCondition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message}
		}
	}
	if ref := metav1.GetControllerOf(p); ref != nil {
		v.controller = string(ref.UID)
	}
	return v
}
