package gateway

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/kubectl/pkg/util/podutils"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/kit"
)

// FieldOwner is the server-side apply field manager of what this package
// writes.
const FieldOwner = "liqo-gateway-controller"

// Events recorded on the gateway objects.
const (
	EventKeysGenerated = "KeysGenerated"
	EventKeysInvalid   = netv1beta1.GatewayReasonKeysInvalid
)

// notReadyRequeue re-checks a gateway that is not ready for a reason no
// watch reports (a load balancer address, a node's address).
const notReadyRequeue = 10 * time.Second

// Reconciler keeps the objects of one gateway kind.
type Reconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
	Options  Options
	kind     kind
	// apiReader reads what the cache does not hold.
	apiReader client.Reader
}

// NewServerReconciler and NewClientReconciler return the reconcilers of
// GatewayServers and GatewayClients.
func NewServerReconciler(c client.Client, rec record.EventRecorder, o Options) *Reconciler {
	return &Reconciler{Client: c, Recorder: rec, Options: o, kind: serverKind{}}
}

// NewClientReconciler: see NewServerReconciler.
func NewClientReconciler(c client.Client, rec record.EventRecorder, o Options) *Reconciler {
	return &Reconciler{Client: c, Recorder: rec, Options: o, kind: clientKind{}}
}

// Reconcile brings one gateway's objects and status in line.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	obj := r.kind.new()
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			// Gone: its objects go with it (owner references); only the
			// cluster-wide binding names it.
			return reconcile.Result{}, r.syncNodesBinding(ctx)
		}
		return reconcile.Result{}, err
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return reconcile.Result{}, nil
	}
	before := obj.DeepCopyObject().(client.Object)
	d := r.kind.describe(obj)
	st := r.kind.status(obj)
	cond, err := r.sync(ctx, obj, d, st)
	kit.SetCondition(st.conditions, obj.GetGeneration(), cond)
	if perr := kit.PatchStatus(ctx, r.Client, obj, before); perr != nil {
		return reconcile.Result{}, errors.Join(err, perr)
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	if !cond.OK {
		return reconcile.Result{RequeueAfter: notReadyRequeue}, nil
	}
	return reconcile.Result{}, nil
}

// sync applies the gateway's objects and fills st; the condition tells
// how far it got.
func (r *Reconciler) sync(ctx context.Context, obj client.Object, d desc, st *status) (kit.Condition, error) {
	ready := func(ok bool, reason, format string, a ...any) kit.Condition {
		return kit.Condition{Type: netv1beta1.ReadyCondition, OK: ok, Reason: reason, Message: fmt.Sprintf(format, a...)}
	}
	if c, ok := r.keys(ctx, obj, d); !ok {
		return c, nil
	}
	*st.secretRef = &corev1.ObjectReference{Kind: "Secret", Namespace: d.Namespace, Name: d.SecretName}

	objs := []client.Object{d.ServiceAccount(), d.RoleBinding()}
	if d.Mode == Server {
		objs = append(objs, d.Service())
	}
	dep := d.Deployment(r.Options)
	objs = append(objs, dep)
	for _, o := range objs {
		if err := r.Client.Patch(ctx, o, client.Apply, client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
			return ready(false, netv1beta1.GatewayReasonApplyFailed, "applying %s %s: %v", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err), err
		}
	}
	if err := r.syncNodesBinding(ctx); err != nil {
		return ready(false, netv1beta1.GatewayReasonApplyFailed, "binding the gateway to node reading: %v", err), err
	}
	*st.ref = &corev1.ObjectReference{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "Deployment", Namespace: d.Namespace, Name: dep.Name}

	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(d.Namespace), client.MatchingLabels(d.selector())); err != nil {
		return ready(false, netv1beta1.GatewayReasonPodNotRunning, "listing the gateway pods: %v", err), err
	}
	pod := activePod(pods.Items, string(d.UID))
	if pod == nil {
		*st.internalEndpoint = nil
		if err := r.markConnectionDown(ctx, d); err != nil {
			return ready(false, netv1beta1.GatewayReasonPodNotRunning, "the gateway pod %s is not running: %v", dep.Name, err), err
		}
		return ready(false, netv1beta1.GatewayReasonPodNotRunning, "the gateway pod %s is not running yet", dep.Name), nil
	}
	ip, node := netv1beta1.IP(pod.Status.PodIP), pod.Spec.NodeName
	*st.internalEndpoint = &netv1beta1.InternalGatewayEndpoint{IP: &ip, Node: &node}

	if d.Mode == Server {
		var svc corev1.Service
		if err := r.Client.Get(ctx, types.NamespacedName{Namespace: d.Namespace, Name: consts.GatewayResourceName(d.Name)}, &svc); err != nil {
			return ready(false, netv1beta1.GatewayReasonNoEndpoint, "reading the gateway Service: %v", err), client.IgnoreNotFound(err)
		}
		var n *corev1.Node
		if svc.Spec.Type == corev1.ServiceTypeNodePort {
			n = &corev1.Node{}
			if err := r.Client.Get(ctx, types.NamespacedName{Name: node}, n); err != nil {
				return ready(false, netv1beta1.GatewayReasonNoEndpoint, "reading node %s: %v", node, err), client.IgnoreNotFound(err)
			}
		}
		ep, err := serverEndpoint(&svc, n)
		if err != nil {
			return ready(false, netv1beta1.GatewayReasonNoEndpoint, "%v", err), nil
		}
		*st.endpoint = ep
	}
	if !podutils.IsPodReady(pod) {
		return ready(false, netv1beta1.GatewayReasonPodNotReady, "the gateway pod %s is running but not ready", pod.Name), nil
	}
	return ready(true, netv1beta1.GatewayReasonReady, "the gateway pod %s is ready on node %s", pod.Name, node), nil
}

// keys makes sure the key Secret exists and holds a usable pair. A Secret
// of ours is created with a fresh pair; one that exists is never
// overwritten (regenerating would cut the tunnel until the peer learns the
// new public key): a bad one is reported for a person to fix.
func (r *Reconciler) keys(ctx context.Context, obj client.Object, d desc) (kit.Condition, bool) {
	fail := func(reason, format string, a ...any) (kit.Condition, bool) {
		return kit.Condition{Type: netv1beta1.ReadyCondition, Reason: reason, Message: fmt.Sprintf(format, a...)}, false
	}
	var s corev1.Secret
	// The manager caches only its own Secrets: one named by the user is
	// read from the API server.
	var reader client.Reader = r.Client
	if !d.OwnSecret && r.apiReader != nil {
		reader = r.apiReader
	}
	err := reader.Get(ctx, types.NamespacedName{Namespace: d.Namespace, Name: d.SecretName}, &s)
	switch {
	case apierrors.IsNotFound(err) && d.OwnSecret:
		priv, pub, kerr := NewKeyPair()
		if kerr != nil {
			return fail(netv1beta1.GatewayReasonKeysInvalid, "%v", kerr)
		}
		if cerr := r.Client.Create(ctx, d.KeySecret(priv, pub)); cerr != nil && !apierrors.IsAlreadyExists(cerr) {
			return fail(netv1beta1.GatewayReasonApplyFailed, "creating the key Secret %s: %v", d.SecretName, cerr)
		}
		r.Recorder.Eventf(obj, corev1.EventTypeNormal, EventKeysGenerated, "generated the WireGuard key pair in Secret %s", d.SecretName)
		return kit.Condition{}, true
	case apierrors.IsNotFound(err):
		return fail(netv1beta1.GatewayReasonSecretNotFound, "the key Secret %s named by spec.secretRef does not exist", d.SecretName)
	case err != nil:
		return fail(netv1beta1.GatewayReasonSecretNotFound, "reading the key Secret %s: %v", d.SecretName, err)
	}
	if kerr := CheckKeyPair(s.Data[consts.PrivateKeyKey], s.Data[consts.PublicKeyKey]); kerr != nil {
		r.Recorder.Eventf(obj, corev1.EventTypeWarning, EventKeysInvalid, "key Secret %s: %v", d.SecretName, kerr)
		return fail(netv1beta1.GatewayReasonKeysInvalid, "key Secret %s: %v (fix or delete it; a deleted Secret of ours is regenerated)", d.SecretName, kerr)
	}
	return kit.Condition{}, true
}

// syncNodesBinding rebuilds the binding of every gateway to node reading
// from the gateways that exist: level-triggered, so a deleted gateway
// loses the right without a finalizer.
func (r *Reconciler) syncNodesBinding(ctx context.Context) error {
	var names []types.NamespacedName
	var servers netv1beta1.GatewayServerList
	if err := r.Client.List(ctx, &servers); err != nil {
		return err
	}
	for _, g := range servers.Items {
		if g.DeletionTimestamp.IsZero() {
			names = append(names, client.ObjectKeyFromObject(&g))
		}
	}
	var clients netv1beta1.GatewayClientList
	if err := r.Client.List(ctx, &clients); err != nil {
		return err
	}
	for _, g := range clients.Items {
		if g.DeletionTimestamp.IsZero() {
			names = append(names, client.ObjectKeyFromObject(&g))
		}
	}
	b := NodesBindingFor(names)
	r.Options.Owner.Own(b)
	return r.Client.Patch(ctx, b, client.Apply, client.FieldOwner(FieldOwner), client.ForceOwnership)
}

// SetupWithManager registers the reconciler: its kind, the objects it owns
// and the gateway pods (whose IP, node and readiness fill the status).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	obj := r.kind.new()
	mode := r.kind.mode()
	r.apiReader = mgr.GetAPIReader()
	toOwner := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		l := o.GetLabels()
		if l[ModeLabel] != string(mode) || l[NameLabel] == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: l[NameLabel]}}}
	})
	b := ctrl.NewControllerManagedBy(mgr).
		Named("gateway-"+string(mode)).
		For(obj).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Secret{}).
		Owns(&rbacv1.RoleBinding{}).
		Watches(&corev1.Pod{}, toOwner, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetLabels()[ComponentLabel] == ComponentValue
		})))
	if mode == Server {
		b = b.Owns(&corev1.Service{})
	}
	return b.Complete(r)
}

// ReasonGatewayNotRunning is the reason of a Connection whose gateway has
// no running pod.
const ReasonGatewayNotRunning = "GatewayNotRunning"

// markConnectionDown turns the gateway's Connection to Error while the
// gateway has no running pod (scaled to zero, evicted, crashing): the pod
// writes its Connection, and without it a "Connected" would stay there.
// The next pod writes its own verdict over this one.
func (r *Reconciler) markConnectionDown(ctx context.Context, d desc) error {
	var conn netv1beta1.Connection
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: d.Namespace, Name: d.Name}, &conn); err != nil {
		return client.IgnoreNotFound(err)
	}
	if conn.Spec.GatewayRef.UID != d.UID || conn.Status.Value == netv1beta1.ConnectionError {
		return nil
	}
	before := conn.DeepCopy()
	if conn.Status.Value == netv1beta1.Connected {
		conn.Status.Value = netv1beta1.ConnectionError
	}
	kit.SetCondition(&conn.Status.Conditions, conn.Generation, kit.Condition{Type: netv1beta1.ConnectedCondition,
		Reason: ReasonGatewayNotRunning, Message: "the gateway has no running pod"})
	return kit.PatchStatus(ctx, r.Client, &conn, before)
}
