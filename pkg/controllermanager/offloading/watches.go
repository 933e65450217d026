package offloading

import (
	"context"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// SetupWithManager registers the controller. Besides its own objects it
// watches the local NamespaceMaps (the providers' answers), the virtual
// nodes (peerings come and go, a provider turns unreachable) and the
// namespaces' scheduling label (put back if removed by hand).
func (r *NamespaceOffloadingReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.Recorder = mgr.GetEventRecorderFor("liqo-namespaceoffloading")
	named := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == offv1beta1.NamespaceOffloadingName })
	localMaps := predicate.NewPredicateFuncs(func(o client.Object) bool {
		m, ok := o.(*offv1beta1.NamespaceMap)
		return ok && isLocalMap(m)
	})
	return ctrl.NewControllerManagedBy(mgr).Named("namespaceoffloading").
		For(&offv1beta1.NamespaceOffloading{}, builder.WithPredicates(named)).
		Watches(&offv1beta1.NamespaceMap{}, handler.EnqueueRequestsFromMapFunc(offloadingsOfMap), builder.WithPredicates(localMaps)).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.allOffloadings), builder.WithPredicates(virtualNodeChanged)).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(offloadingOfNamespace), builder.WithPredicates(schedulingLabelChanged)).
		Complete(r)
}

func offloadingKey(namespace string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: namespace, Name: offv1beta1.NamespaceOffloadingName}}
}

// offloadingsOfMap maps a NamespaceMap to the offloadings of the namespaces
// it lists or reports.
func offloadingsOfMap(_ context.Context, o client.Object) []reconcile.Request {
	m, ok := o.(*offv1beta1.NamespaceMap)
	if !ok {
		return nil
	}
	namespaces := map[string]bool{}
	for ns := range m.Spec.DesiredMapping {
		namespaces[ns] = true
	}
	for ns := range m.Status.CurrentMapping {
		namespaces[ns] = true
	}
	out := make([]reconcile.Request, 0, len(namespaces))
	for ns := range namespaces {
		out = append(out, offloadingKey(ns))
	}
	return out
}

func offloadingOfNamespace(_ context.Context, o client.Object) []reconcile.Request {
	return []reconcile.Request{offloadingKey(o.GetName())}
}

// allOffloadings maps a virtual node to every NamespaceOffloading: each may
// select the cluster.
func (r *NamespaceOffloadingReconciler) allOffloadings(ctx context.Context, _ client.Object) []reconcile.Request {
	var list offv1beta1.NamespaceOffloadingList
	if err := r.Client.List(ctx, &list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the NamespaceOffloadings to re-evaluate")
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		if list.Items[i].Name == offv1beta1.NamespaceOffloadingName {
			out = append(out, offloadingKey(list.Items[i].Namespace))
		}
	}
	return out
}

// virtualNodeChanged passes virtual nodes appearing, going, changing labels
// (the selector's input) or reachability (an unoffload stops waiting for
// an unreachable provider), and not their frequent status updates.
var virtualNodeChanged = predicate.Funcs{
	CreateFunc:  func(e event.CreateEvent) bool { return isVirtualNode(e.Object) },
	DeleteFunc:  func(e event.DeleteEvent) bool { return isVirtualNode(e.Object) },
	GenericFunc: func(event.GenericEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*corev1.Node)
		n, ok2 := e.ObjectNew.(*corev1.Node)
		if !ok1 || !ok2 || !isVirtualNode(o) && !isVirtualNode(n) {
			return false
		}
		return !maps.Equal(o.Labels, n.Labels) || nodeReachable(o) != nodeReachable(n)
	},
}

// schedulingLabelChanged passes namespaces whose scheduling label changed.
var schedulingLabelChanged = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetLabels()[consts.SchedulingEnabledLabel] != e.ObjectNew.GetLabels()[consts.SchedulingEnabledLabel]
	},
}

func isVirtualNode(o client.Object) bool {
	return o.GetLabels()[consts.TypeLabel] == consts.TypeVirtualNode
}
