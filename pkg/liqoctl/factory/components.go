package factory

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/liqo-go/liqo/pkg/consts"
)

// ClusterInfo is what the components publish about their cluster.
type ClusterInfo struct {
	ID     string
	Labels string
}

// FindComponents checks that Liqo runs in the cluster's namespace and returns
// the cluster's identity. Its errors name the namespace and the flag to fix,
// because a wrong --namespace/--remote-namespace is the most common mistake.
func (c *Cluster) FindComponents(ctx context.Context) (*ClusterInfo, error) {
	flag := "--namespace"
	if c.Role == "remote" {
		flag = "--remote-namespace"
	}
	notFound := func(why string) error {
		return fmt.Errorf("liqo components not found in namespace %q of the %s cluster: %s; is Liqo installed there, or is %s wrong?",
			c.Namespace, c.Role, why, flag)
	}
	if _, err := c.Clientset.CoreV1().Namespaces().Get(ctx, c.Namespace, metav1.GetOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, notFound("the namespace does not exist")
		}
		return nil, fmt.Errorf("reading namespace %q of the %s cluster: %w", c.Namespace, c.Role, err)
	}
	cm, err := c.Clientset.CoreV1().ConfigMaps(c.Namespace).Get(ctx, consts.ClusterIDConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, notFound("there is no ConfigMap " + consts.ClusterIDConfigMap)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the cluster identity in namespace %q of the %s cluster: %w", c.Namespace, c.Role, err)
	}
	info := &ClusterInfo{ID: cm.Data[consts.ClusterIDKey], Labels: cm.Data[consts.ClusterLabelsKey]}
	if info.ID == "" {
		return nil, notFound("ConfigMap " + consts.ClusterIDConfigMap + " has no cluster ID")
	}
	lease, err := c.Clientset.CoordinationV1().Leases(c.Namespace).Get(ctx, consts.ControllerManagerLease, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("the liqo controller manager of the %s cluster (%s) is not running: no lease %s/%s",
			c.Role, info.ID, c.Namespace, consts.ControllerManagerLease)
	}
	if err != nil {
		return nil, err
	}
	if stale(lease.Spec.RenewTime, lease.Spec.LeaseDurationSeconds, lease.Spec.HolderIdentity) {
		last := "never"
		if lease.Spec.RenewTime != nil {
			last = time.Since(lease.Spec.RenewTime.Time).Round(time.Second).String() + " ago"
		}
		return nil, fmt.Errorf("the liqo controller manager of the %s cluster (%s) is not running: its lease was last renewed %s",
			c.Role, info.ID, last)
	}
	return info, nil
}

func stale(renew *metav1.MicroTime, duration *int32, holder *string) bool {
	if renew == nil || holder == nil || *holder == "" {
		return true
	}
	d := 15 * time.Second
	if duration != nil {
		d = time.Duration(*duration) * time.Second
	}
	// Allow for clock skew between this machine and the cluster.
	return time.Since(renew.Time) > 2*d+10*time.Second
}

// WaitForComponents waits until Liqo runs in the cluster of kubeconfig, as
// FindComponents sees it: after the components start, or restart after an
// outage cost them their lease. It returns the last reason on timeout.
func WaitForComponents(ctx context.Context, kubeconfig, namespace string, timeout time.Duration) error {
	var last error
	// Each attempt runs on ctx, not the poll's: timeout only bounds when
	// to stop trying, and the last attempt's reason is what is returned.
	_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		c := Cluster{Role: "local", Kubeconfig: kubeconfig, Namespace: namespace}
		last = c.Connect(ctx, 5*time.Second)
		if last == nil {
			_, last = c.FindComponents(ctx)
		}
		return last == nil, nil
	})
	return last
}
