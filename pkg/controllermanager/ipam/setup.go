package ipam

import (
	ctrl "sigs.k8s.io/controller-runtime"
)

// Setup registers the IPAM's reconcilers, sharing one Book, and the
// Networks of the local CIDRs with mgr.
func Setup(mgr ctrl.Manager, o Options) error {
	book := NewBook(o, mgr.GetAPIReader(), mgr.GetClient())
	rec := mgr.GetEventRecorderFor("liqo-ipam")
	if err := (&NetworkReconciler{Client: mgr.GetClient(), Recorder: rec, Book: book, Options: o}).SetupWithManager(mgr); err != nil {
		return err
	}
	if err := (&IPReconciler{Client: mgr.GetClient(), Recorder: rec, Book: book, Options: o}).SetupWithManager(mgr); err != nil {
		return err
	}
	if err := (&ConfigurationReconciler{Client: mgr.GetClient(), Recorder: rec, Options: o}).SetupWithManager(mgr); err != nil {
		return err
	}
	if err := mgr.Add(&LocalNetworks{Client: mgr.GetClient(), Options: o}); err != nil {
		return err
	}
	return mgr.Add(&APIServerIP{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Namespace: o.Namespace, Owner: o.Owner})
}
