package shadowpod

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
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
// ShadowPod to change a pod, as Kubernetes replaces pods. What is shared
// with the other shadow kinds (create, collisions, conflicts, deletion,
// the status write) is kit.ShadowReconciler's; podKind holds what is the
// ShadowPod's own.
type Reconciler struct {
	Client client.Client
	// Workers is the number of concurrent reconciles (DefaultWorkers if 0).
	Workers  int
	Recorder record.EventRecorder
	// APIReader reads a ShadowPod's whole spec when its Pod must be made
	// again: the cache keeps it trimmed once the Pod exists (ShadowPodCache).
	// The manager's API reader if nil.
	APIReader client.Reader
	// NodeSelector restricts the provider's nodes its consumers' pods run
	// on (none: any node the scheduler picks).
	NodeSelector map[string]string
	// MetadataOnly picks the annotation and label keys of a ShadowPod its
	// Pod goes without (see PodOptions); nil keeps them all.
	MetadataOnly func(key string) bool
	// MaxGracePeriod caps the grace periods of the pods
	// (DefaultMaxGracePeriod if 0).
	MaxGracePeriod time.Duration
	// KeepImagePullPolicy keeps the consumer's imagePullPolicy instead of
	// Always (PodOptions.KeepImagePullPolicy).
	KeepImagePullPolicy bool
}

// maxGracePeriod is r.MaxGracePeriod or its default.
func (r *Reconciler) maxGracePeriod() time.Duration {
	if r.MaxGracePeriod > 0 {
		return r.MaxGracePeriod
	}
	return DefaultMaxGracePeriod
}

// podKind is the ShadowPod's side of kit.ShadowReconciler.
type podKind struct{ *Reconciler }

func (podKind) NewShadow() *offv1beta1.ShadowPod { return &offv1beta1.ShadowPod{} }
func (podKind) NewReal() *corev1.Pod             { return &corev1.Pod{} }

// Refusal refuses nothing: the admission webhook vets ShadowPods before
// they exist, which a Pod's creation would be too late for.
func (podKind) Refusal(context.Context, *offv1beta1.ShadowPod) (string, error) { return "", nil }

// Forge forges the Pod with the consumer's addresses translated as the
// network fabric maps them. A Pod made again (the first one went) is made
// from the stored ShadowPod: the cache's copy lacks the spec by then.
func (k podKind) Forge(ctx context.Context, sp *offv1beta1.ShadowPod) (*corev1.Pod, error) {
	if specTrimmed(sp) {
		stored := &offv1beta1.ShadowPod{}
		if err := k.APIReader.Get(ctx, client.ObjectKeyFromObject(sp), stored); err != nil {
			return nil, err
		}
		if stored.UID != sp.UID {
			return nil, fmt.Errorf("ShadowPod %s was replaced (uid %s, was %s): retrying", client.ObjectKeyFromObject(sp), stored.UID, sp.UID)
		}
		sp = stored
	}
	translate, err := ipam.PeerTranslate(ctx, k.Client, sp.Labels[consts.OriginClusterIDLabel])
	if err != nil {
		return nil, err
	}
	pod, capped := forgePod(sp, PodOptions{NodeSelector: k.NodeSelector, MetadataOnly: k.MetadataOnly, MaxGracePeriod: k.maxGracePeriod(),
		KeepImagePullPolicy: k.KeepImagePullPolicy}, translate)
	if len(capped) > 0 {
		k.Recorder.Eventf(sp, corev1.EventTypeWarning, EventGracePeriodCapped,
			"pod %s runs with its grace periods capped at %s, the longest this provider allows: %s asked for more (seconds)",
			sp.Name, k.maxGracePeriod(), strings.Join(capped, ", "))
	}
	return pod, nil
}

// Created records a recreation. A first creation records no Event: it is
// what every ShadowPod asks for, the status's Ready condition tells it,
// and an Event per pod would be a write per pod on the provider's API
// server (the consumer's ReplicaSet already tells of its pods). The status
// is not written from the create response either: the Pod's own add event
// follows at once and writes it, and writing it here too would race that
// event and double the writes.
func (k podKind) Created(sp *offv1beta1.ShadowPod, _ *corev1.Pod) {
	if podExisted(&sp.Status) {
		k.Recorder.Eventf(sp, corev1.EventTypeNormal, EventPodRecreated, "Recreated pod %s, which had gone", sp.Name)
	}
}

// CreateFailed reports a refused Pod (quota, admission, an invalid spec).
func (k podKind) CreateFailed(sp *offv1beta1.ShadowPod, err error) error {
	reason := ReasonCreationFailed
	if podExisted(&sp.Status) {
		reason = ReasonRecreationFailed
	}
	if readyReason(sp) != reason {
		k.Recorder.Eventf(sp, corev1.EventTypeWarning, EventCreationFailed, "Creating pod %s: %v", sp.Name, err)
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

// Sync mirrors the Pod into the ShadowPod's status (a terminating one is
// waited for: its delete event brings us back to recreate it). A Pod whose
// labels someone removed fell out of the cache, and none of its events
// would reach us any more: they are put back, a metadata change that does
// not touch the running containers.
func (k podKind) Sync(ctx context.Context, sp *offv1beta1.ShadowPod, pod *corev1.Pod) error {
	if !hasOurLabels(pod, sp) {
		patch := client.MergeFrom(pod.DeepCopy())
		metav1.SetMetaDataLabel(&pod.ObjectMeta, consts.ManagedByLabel, consts.ManagedByValue)
		metav1.SetMetaDataLabel(&pod.ObjectMeta, ShadowPodLabel, LabelValue(sp.Name))
		if err := k.Client.Patch(ctx, pod, patch); err != nil {
			return client.IgnoreNotFound(err)
		}
		k.Recorder.Eventf(sp, corev1.EventTypeNormal, EventLabelsRestored, "Restored the labels of pod %s", sp.Name)
	}
	if wait := settling(sp, pod, time.Now()); wait > 0 {
		return &kit.WriteLater{After: wait}
	}
	mirrorPod(&sp.Status, pod)
	return nil
}

// Conflict reports another Pod holding the ShadowPod's name. It is looked
// at again on the next event of the ShadowPod, or of the other Pod if it is
// in the cache and claims a ShadowPod of that name as its controller (the
// Pod of a deleted ShadowPod the garbage collector has not removed yet):
// the controller does not poll for an unrelated Pod to go.
func (k podKind) Conflict(sp *offv1beta1.ShadowPod, msg string) {
	if readyReason(sp) != ReasonNameConflict {
		k.Recorder.Event(sp, corev1.EventTypeWarning, EventNameConflict, msg)
	}
	notRunning(&sp.Status, ReasonNameConflict, msg)
}

// Refused is never called: Refusal refuses nothing.
func (podKind) Refused(*offv1beta1.ShadowPod, string) {}

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
//
// The cache keeps each Pod without its spec but for the node name
// (podWithoutSpec): at 10,000 offloaded pods the specs were the larger part
// of the provider manager's heap, and no controller reads them from here.
func PodCache() cache.ByObject {
	return cache.ByObject{Label: labels.SelectorFromSet(labels.Set{consts.ManagedByLabel: consts.ManagedByValue}),
		Transform: podWithoutSpec}
}

// podWithoutSpec trims a cached Pod to what the manager's controllers read
// of our Pods: metadata and status (the ShadowPod controller mirrors the
// status and restores the labels with a patch, never an update) and the
// node name (the gateway controller's endpoint). A spec is the consumer's,
// forged once from the ShadowPod and immutable in the main; managed fields
// nothing reads (this replaces the cache's default transform, which drops
// only those).
func podWithoutSpec(obj any) (any, error) {
	if p, ok := obj.(*corev1.Pod); ok {
		p.ManagedFields, p.Spec = nil, corev1.PodSpec{NodeName: p.Spec.NodeName}
	}
	return obj, nil
}

// ShadowPodCache is the ShadowPod entry of the cache options of a manager
// running this controller. Once its Pod exists (its status says so), a
// ShadowPod is kept with only the part of its spec that keep returns
// (nothing if keep is nil) and of its metadata but its identity and origin
// label: this controller reads the rest only to make the Pod, and reads it
// from the API server when it makes one again. At
// 10,000 offloaded pods the specs were most of the provider manager's
// heap. The admission webhook's ledger reads the ShadowPods' resources from
// the same cache, so its manager passes quota.QuotaFields. Managed fields
// are dropped too (this replaces the cache's default transform).
func ShadowPodCache(keep func(*corev1.PodSpec) corev1.PodSpec) cache.ByObject {
	return cache.ByObject{Transform: func(obj any) (any, error) {
		if sp, ok := obj.(*offv1beta1.ShadowPod); ok {
			sp.ManagedFields = nil
			if podExisted(&sp.Status) {
				spec := corev1.PodSpec{}
				if keep != nil {
					spec = keep(&sp.Spec.Pod)
				}
				sp.Spec.Pod = spec
				// The pod's labels and annotations, copied at its creation;
				// the origin is still read (the ledger, a drained tenant's
				// eviction).
				sp.Labels = kit.OnlyKey(sp.Labels, consts.OriginClusterIDLabel)
				sp.Annotations = nil
			}
		}
		return obj, nil
	}}
}

// Caches are the cache options of the kinds this controller reads: our
// Pods (PodCache) and the ShadowPods (ShadowPodCache with keep).
func Caches(keep func(*corev1.PodSpec) corev1.PodSpec) map[client.Object]cache.ByObject {
	return map[client.Object]cache.ByObject{&corev1.Pod{}: PodCache(), &offv1beta1.ShadowPod{}: ShadowPodCache(keep)}
}

// specTrimmed tells whether a cached ShadowPod lacks its spec
// (ShadowPodCache): it does exactly when its Pod existed.
func specTrimmed(sp *offv1beta1.ShadowPod) bool { return podExisted(&sp.Status) }

// SetupWithManager registers the controller. The manager's caches must be
// configured with Caches.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil {
		r.Client = mgr.GetClient()
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorderFor("liqo-shadowpod")
	}
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	workers := r.Workers
	if workers <= 0 {
		workers = DefaultWorkers
	}
	// The Pod is deleted as soon as its ShadowPod is being deleted, with
	// its own (capped) grace period: a finalizer someone put on the
	// ShadowPod (a consumer's, to hold a drain back) must not keep the pod
	// running. A conflict is not polled (see Conflict).
	shadows := &kit.ShadowReconciler[*offv1beta1.ShadowPod, *corev1.Pod]{
		Client: r.Client, APIReader: r.APIReader, Kind: podKind{r}, DeleteWithShadow: true,
	}
	return ctrl.NewControllerManagedBy(mgr).Named("shadowpod").
		For(&offv1beta1.ShadowPod{}, builder.WithPredicates(shadowPodChanged)).
		Owns(&corev1.Pod{}, builder.WithPredicates(podChanged)).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(shadows)
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
