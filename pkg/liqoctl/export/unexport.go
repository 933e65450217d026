package export

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/liqo-go/liqo/pkg/wait"
)

// Run deletes the Service's ServiceExport, and only that, and waits until
// it is gone (Liqo puts no finalizer on it, another implementation may).
func (o *UnexportOptions) Run(ctx context.Context) error {
	if err := checkNames(o.Namespace, o.Name); err != nil {
		return err
	}
	if err := o.Local.Connect(ctx, min(o.Timeout/3, 10*time.Second)); err != nil {
		return err
	}
	key := types.NamespacedName{Namespace: o.Namespace, Name: o.Name}
	se := &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: o.Name}}
	o.out.Step("Withdrawing the export of Service %s", key)
	switch err := o.Local.Client.Delete(ctx, se); {
	case meta.IsNoMatchError(err):
		// Without the type nothing can be exported: the outcome the
		// user asks for holds.
		o.out.Info("Service %s is not exported: the cluster has no Multi-Cluster Services CRDs", key)
		return nil
	case apierrors.IsNotFound(err):
		o.out.Info("Service %s is not exported", key)
		return nil
	case err != nil:
		return fmt.Errorf("deleting the ServiceExport of %s: %w", key, err)
	}
	if err := wait.Gone(ctx, o.Local.Client, key, se, "the ServiceExport of "+key.String()); err != nil {
		return fmt.Errorf("%w: finalizers %v hold it", err, se.Finalizers)
	}
	o.out.Info("Service %s is no longer exported (the Service itself is untouched)", key)
	return nil
}
