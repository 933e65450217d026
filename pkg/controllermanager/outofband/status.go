package outofband

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/kit"
	"github.com/liqo-go/liqo/pkg/peering"
)

// state is one report on a request: the condition's status, reason and
// message.
type state struct {
	status  corev1beta1.ConditionStatusType
	reason  string
	message string
}

// foreignClusterCondition opens a ForeignCluster condition for
// kit.SetConditionOf.
func foreignClusterCondition(c *corev1beta1.Condition) kit.ConditionFields[corev1beta1.ConditionType, corev1beta1.ConditionStatusType] {
	return kit.ConditionFields[corev1beta1.ConditionType, corev1beta1.ConditionStatusType]{
		Type: &c.Type, Status: &c.Status, Reason: &c.Reason, Message: &c.Message, LastTransitionTime: &c.LastTransitionTime}
}

// setState sets the out-of-band condition in conds to st at now (to the
// second, as the API server keeps it); it reports whether conds changed.
func setState(conds *[]corev1beta1.Condition, st state, now time.Time) bool {
	return kit.SetConditionOf(conds, foreignClusterCondition, peering.OutOfBandCondition, st.status, st.reason, st.message,
		metav1.NewTime(now.Truncate(time.Second)))
}

// eventType is the Event type of a report.
func eventType(st state) string {
	if st.status == corev1beta1.ErrorStatus || st.status == corev1beta1.NotReadyStatus {
		return corev1.EventTypeWarning
	}
	return corev1.EventTypeNormal
}

// report sets the condition of the ForeignCluster of provider to st for
// the request id (creating the ForeignCluster if the foreigncluster
// controller has not yet), and records an Event when it changed. The
// status is written before the annotation naming the request, so that a
// reader who finds the annotation finds a condition about that request.
func (r *Reconciler) report(ctx context.Context, provider, id string, st state) error {
	var changed bool
	var fc *corev1beta1.ForeignCluster
	// The foreigncluster controller may create the ForeignCluster, or
	// update its status, meanwhile.
	retriable := func(err error) bool { return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) }
	err := retry.OnError(retry.DefaultRetry, retriable, func() error {
		fc = &corev1beta1.ForeignCluster{}
		err := r.Reader.Get(ctx, types.NamespacedName{Name: provider}, fc)
		if apierrors.IsNotFound(err) {
			fc = &corev1beta1.ForeignCluster{ObjectMeta: metav1.ObjectMeta{Name: provider,
				Labels: map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.RemoteClusterIDLabel: provider}},
				Spec: corev1beta1.ForeignClusterSpec{ClusterID: corev1beta1.ClusterID(provider)}}
			err = r.Client.Create(ctx, fc)
		}
		if err != nil {
			return err
		}
		before := fc.DeepCopy()
		if setState(&fc.Status.Conditions, st, r.now()) {
			if err := kit.PatchStatus(ctx, r.Client, fc, before); err != nil {
				return err
			}
			changed = true
		}
		if fc.Annotations[peering.OutOfBandRequestIDKey] != id {
			if fc.Annotations == nil {
				fc.Annotations = map[string]string{}
			}
			fc.Annotations[peering.OutOfBandRequestIDKey] = id
			return r.Client.Update(ctx, fc)
		}
		return nil
	})
	if err == nil && changed && r.Recorder != nil {
		r.Recorder.Event(fc, eventType(st), st.reason, st.message)
	}
	return err
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}
