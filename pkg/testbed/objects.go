package testbed

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// createObjects creates the objects of an add-on (the cluster DNS,
// metrics-server), keeping those that exist already.
func (c *Cluster) createObjects(ctx context.Context, what string, objs []client.Object) error {
	cl, err := client.New(c.Config, client.Options{})
	if err != nil {
		return err
	}
	for _, obj := range objs {
		err := cl.Create(ctx, obj)
		if apierrors.IsInvalid(err) {
			// A Service with a fixed cluster IP is Invalid, not
			// AlreadyExists, when created twice.
			if cl.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object)) == nil {
				continue
			}
		}
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %s (%T %s): %w", what, obj, obj.GetName(), err)
		}
	}
	return nil
}
