package testbed

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

func (c *Cluster) waitEtcd(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/health", c.ports.etcdClient), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"health":"true"`) {
		return fmt.Errorf("etcd health: %s %s", resp.Status, body)
	}
	return nil
}

func (c *Cluster) waitAPIServer(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("/readyz: %w: %s", err, body)
	}
	return nil
}

// waitWorkloadReady is true once pods can be created and scheduled: the
// controller manager made the default ServiceAccount and every simulated node
// is Ready.
func (c *Cluster) waitWorkloadReady(ctx context.Context) error {
	cs := c.Client()
	if _, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); err != nil {
		return fmt.Errorf("default ServiceAccount: %w", err)
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: NodeTypeLabel + "=kwok"})
	if err != nil {
		return err
	}
	ready := 0
	for _, n := range nodes.Items {
		if NodeReady(&n) {
			ready++
		}
	}
	if want := c.expectedNodes(); ready < want {
		return fmt.Errorf("%d of %d simulated nodes Ready", ready, want)
	}
	return nil
}

// NodeReady tells whether a node's Ready condition is True.
func NodeReady(n *corev1.Node) bool {
	return NodeCondition(n, corev1.NodeReady) == corev1.ConditionTrue
}

// NodeCondition is the status of n's condition of type typ, Unknown if it
// has none.
func NodeCondition(n *corev1.Node, typ corev1.NodeConditionType) corev1.ConditionStatus {
	for _, cond := range n.Status.Conditions {
		if cond.Type == typ {
			return cond.Status
		}
	}
	return corev1.ConditionUnknown
}
