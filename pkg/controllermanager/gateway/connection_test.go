package gateway

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/test/harness"
)

// TestConnectionDownWhenScaledToZero: a gateway scaled to zero has no pod
// to report its tunnel, so the controller turns the Connection the pod
// left "Connected" into an Error naming why.
func TestConnectionDownWhenScaledToZero(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	ns := tenant(t, ctx, "lisbon")
	gws := &netv1beta1.GatewayServer{ObjectMeta: metav1.ObjectMeta{Name: "lisbon", Namespace: ns,
		Labels: map[string]string{consts.RemoteClusterIDLabel: "lisbon"}},
		Spec: netv1beta1.GatewayServerSpec{Endpoint: netv1beta1.Endpoint{Port: 51840, ServiceType: corev1.ServiceTypeNodePort}}}
	if err := cl.Create(ctx, gws); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, "the server Ready", func() (bool, error) {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(gws), gws); err != nil {
			return false, err
		}
		c := readyCondition(gws.Status.Conditions)
		return c != nil && c.Status == metav1.ConditionTrue, nil
	})
	// What the gateway pod writes once its tunnel is up.
	conn := &netv1beta1.Connection{ObjectMeta: metav1.ObjectMeta{Name: "lisbon", Namespace: ns},
		Spec: netv1beta1.ConnectionSpec{Type: netv1beta1.ServerConnection, GatewayRef: corev1.ObjectReference{
			APIVersion: netv1beta1.GroupVersion.String(), Kind: "GatewayServer", Namespace: ns, Name: "lisbon", UID: gws.UID}}}
	if err := cl.Create(ctx, conn); err != nil {
		t.Fatal(err)
	}
	conn.Status.Value = netv1beta1.Connected
	if err := cl.Status().Update(ctx, conn); err != nil {
		t.Fatal(err)
	}

	deps := restCfgClientset(t).AppsV1().Deployments(ns)
	s, err := deps.GetScale(ctx, "gw-lisbon", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Spec.Replicas = 0
	if _, err := deps.UpdateScale(ctx, "gw-lisbon", s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, "the Connection marked down", func() (bool, error) {
		if err := cl.Get(ctx, types.NamespacedName{Namespace: ns, Name: "lisbon"}, conn); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(conn.Status.Conditions, netv1beta1.ConnectedCondition)
		return conn.Status.Value == netv1beta1.ConnectionError && c != nil && c.Reason == ReasonGatewayNotRunning, nil
	})
	// The controller leaves the replicas as the administrator set them.
	if s, err := deps.GetScale(ctx, "gw-lisbon", metav1.GetOptions{}); err != nil || s.Spec.Replicas != 0 {
		t.Errorf("replicas %v (%v), want the 0 the administrator set", s, err)
	}
}

func restCfgClientset(t *testing.T) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}
