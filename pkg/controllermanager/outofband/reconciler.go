package outofband

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/peering"
)

// Reconciler performs the out-of-band peering each request Secret asks for.
type Reconciler struct {
	// Client writes on this cluster (the consumer); Reader reads the
	// ForeignClusters from its API server, for the conflict-free updates
	// of their conditions.
	Client client.Client
	Reader client.Reader
	// ClusterID is this cluster's; Namespace is where it runs Liqo (the
	// Networks of its CIDRs, for the network fabric).
	ClusterID string
	Namespace string
	Recorder  record.EventRecorder
	// Timeout bounds one attempt at the whole handshake: its steps wait
	// for the controllers of both clusters (usually milliseconds each), for
	// the gateways and their tunnel, and for the provider's decision on the
	// ResourceSlice.
	Timeout time.Duration
	// Reach bounds the connection to the provider's API server.
	Reach time.Duration
	// Now is the clock (time.Now if nil).
	Now func() time.Time
}

// Defaults of Timeout and Reach.
const (
	DefaultTimeout = 5 * time.Minute
	DefaultReach   = 10 * time.Second
)

// stepError is a step's failure, with the reason it is reported under and
// whether retrying can help.
type stepError struct {
	reason   string
	terminal bool
	err      error
}

func (e *stepError) Error() string { return e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }

// fail marks err as the failure of a step under reason; terminal says
// retrying the same request cannot help.
func fail(reason string, terminal bool, err error) error {
	return &stepError{reason: reason, terminal: terminal, err: err}
}

// Reconcile performs the request in the Secret req names, unless the
// ForeignCluster says it was performed, or given up, already.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if req.Name != peering.OutOfBandRequestSecret {
		return reconcile.Result{}, nil
	}
	provider, ok := consts.ClusterIDOfTenantNamespace(req.Namespace)
	if !ok {
		return reconcile.Result{}, nil
	}
	var s corev1.Secret
	if err := r.Client.Get(ctx, req.NamespacedName, &s); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if s.Labels[peering.OutOfBandRequestLabel] != "true" || !s.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	id := s.Annotations[peering.OutOfBandRequestIDKey]
	logger := log.FromContext(ctx).WithValues("provider", provider, "request", id)
	ctx = log.IntoContext(ctx, logger)
	rq, err := peering.ParseOutOfBandRequest(&s)
	if err == nil && rq.ClusterID != provider {
		err = fmt.Errorf("the request names cluster %s, in the tenant namespace of %s", rq.ClusterID, provider)
	}
	if err != nil {
		st := state{corev1beta1.ErrorStatus, peering.ReasonInvalidRequest, "invalid out-of-band peering request: " + err.Error()}
		return reconcile.Result{}, r.report(ctx, provider, id, st)
	}
	if done, err := r.performed(ctx, provider, id); err != nil || done {
		return reconcile.Result{}, err
	}
	if provider == r.ClusterID {
		st := state{corev1beta1.ErrorStatus, peering.ReasonWrongCluster, fmt.Sprintf("%s is this cluster's own ID: a cluster cannot peer with itself", provider)}
		return reconcile.Result{}, r.report(ctx, provider, id, st)
	}

	hs := &handshake{r: r, req: rq, progress: &progress{log: logger}}
	actx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	final, err := hs.run(actx)
	if err == nil {
		logger.Info("out-of-band peering performed")
		return reconcile.Result{}, r.report(ctx, provider, id, final)
	}
	var se *stepError
	if !errors.As(err, &se) {
		se = &stepError{reason: peering.ReasonStepFailed, err: err}
	}
	if ctx.Err() == nil && actx.Err() != nil {
		se.terminal = false // the attempt took too long: try again
	}
	if se.terminal {
		st := state{corev1beta1.ErrorStatus, se.reason, err.Error()}
		if rerr := r.report(ctx, provider, id, st); rerr != nil {
			return reconcile.Result{}, rerr
		}
		return reconcile.Result{}, reconcile.TerminalError(err)
	}
	st := state{corev1beta1.NotReadyStatus, se.reason, err.Error() + " (retrying)"}
	if rerr := r.report(ctx, provider, id, st); rerr != nil {
		return reconcile.Result{}, rerr
	}
	return reconcile.Result{}, err
}

// performed tells whether the ForeignCluster reports the request id
// Established or given up: then there is nothing left to do for it.
func (r *Reconciler) performed(ctx context.Context, provider, id string) (bool, error) {
	var fc corev1beta1.ForeignCluster
	if err := r.Reader.Get(ctx, client.ObjectKey{Name: provider}, &fc); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	c := peering.OutOfBandState(&fc, id)
	return c != nil && (c.Status == corev1beta1.EstablishedStatus || c.Status == corev1beta1.ErrorStatus), nil
}

// SetupWithManager registers the controller: it is woken by the request
// Secrets only. A handshake holds its worker while it waits for the
// controllers of both clusters, hence a few workers.
func (r *Reconciler) SetupWithManager(mgr manager.Manager) error {
	if r.Timeout == 0 {
		r.Timeout = DefaultTimeout
	}
	if r.Reach == 0 {
		r.Reach = DefaultReach
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorderFor("liqo-out-of-band")
	}
	return builder.ControllerManagedBy(mgr).Named("outofband").
		For(&corev1.Secret{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetName() == peering.OutOfBandRequestSecret && o.GetLabels()[peering.OutOfBandRequestLabel] == "true"
		}))).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(r)
}
