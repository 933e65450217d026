package forge

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-go/liqo/pkg/consts"
)

// Event is the local copy of an Event of a provider's pod or PVC, about
// the local object of that kind (the pod it runs for, the PVC its volume
// backs), so that `kubectl describe` on the consumer tells what happened
// remotely. It keeps the remote Event's name (copies stay idempotent
// across restarts) and is written in the legacy form, which needs no
// reporting controller; the source names the provider.
func Event(remote *corev1.Event, local metav1.Object, providerID string) *corev1.Event {
	first, last := remote.FirstTimestamp, remote.LastTimestamp
	if first.IsZero() {
		first = metav1.NewTime(remote.EventTime.Time)
	}
	if last.IsZero() {
		last = first
		if remote.Series != nil {
			last = metav1.NewTime(remote.Series.LastObservedTime.Time)
		}
	}
	count := remote.Count
	if remote.Series != nil && remote.Series.Count > count {
		count = remote.Series.Count
	}
	if count < 1 {
		count = 1
	}
	component := remote.Source.Component
	if component == "" {
		component = remote.ReportingController
	}
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: remote.Name, Namespace: local.GetNamespace(),
			Labels: map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.OriginClusterIDLabel: providerID}},
		InvolvedObject: corev1.ObjectReference{Kind: remote.InvolvedObject.Kind, APIVersion: "v1", Namespace: local.GetNamespace(), Name: local.GetName(),
			UID: local.GetUID(), FieldPath: remote.InvolvedObject.FieldPath},
		Reason: remote.Reason, Message: remote.Message, Type: remote.Type,
		Source:         corev1.EventSource{Component: component, Host: providerID},
		FirstTimestamp: first, LastTimestamp: last, Count: count,
	}
}

// EventChanged reports whether a local Event copy misses what want says.
func EventChanged(want, have *corev1.Event) bool {
	return want.Count != have.Count || want.Message != have.Message || !want.LastTimestamp.Equal(&have.LastTimestamp) ||
		want.InvolvedObject.UID != have.InvolvedObject.UID
}
