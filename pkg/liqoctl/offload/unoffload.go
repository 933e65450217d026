package offload

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/volumes"
	"github.com/liqo-go/liqo/pkg/wait"
)

// Run deletes the NamespaceOffloading and waits until the controller
// manager lets it go, which it does once the twins are removed.
func (o *UnoffloadOptions) Run(ctx context.Context) error {
	if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
		return fmt.Errorf("%q is not a valid namespace name: %s", o.Namespace, strings.Join(errs, "; "))
	}
	if err := connect(ctx, &o.Local, o.Timeout, o.Namespace); err != nil {
		return err
	}
	c := o.Local.Client
	if !o.DeleteRemoteVolumes {
		remote, err := volumes.Remote(ctx, c, func(ns, _ string) bool { return ns == o.Namespace })
		if err != nil {
			return err
		}
		if len(remote) > 0 {
			return volumes.Refuse("unoffloading namespace "+o.Namespace, remote)
		}
	}
	nsof := &offv1beta1.NamespaceOffloading{ObjectMeta: metav1.ObjectMeta{Name: offv1beta1.NamespaceOffloadingName, Namespace: o.Namespace}}
	o.out.Step("Disabling the offloading of namespace %s", o.Namespace)
	if err := c.Delete(ctx, nsof); err != nil {
		if apierrors.IsNotFound(err) {
			o.out.Info("namespace %s is not offloaded", o.Namespace)
			return nil
		}
		return fmt.Errorf("deleting the NamespaceOffloading of namespace %s: %w", o.Namespace, err)
	}
	o.out.Step("Waiting for the twin namespaces to be removed")
	key := types.NamespacedName{Namespace: o.Namespace, Name: nsof.Name}
	if err := wait.Gone(ctx, c, key, nsof, "the NamespaceOffloading"); err != nil {
		return fmt.Errorf("timed out waiting for namespace %s to be unoffloaded (%s)", o.Namespace, readyMessage(nsof))
	}
	o.out.Info("Offloading of namespace %s correctly disabled", o.Namespace)
	return nil
}

// connect reaches the cluster, checks that Liqo runs there and that the
// namespace exists.
func connect(ctx context.Context, c *factory.Cluster, timeout time.Duration, namespace string) error {
	if err := c.Connect(ctx, min(timeout/4, 10*time.Second)); err != nil {
		return err
	}
	if _, err := c.FindComponents(ctx); err != nil {
		return err
	}
	if _, err := c.Clientset.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("namespace %q does not exist in the local cluster", namespace)
		}
		return fmt.Errorf("reading namespace %q: %w", namespace, err)
	}
	return nil
}
