package reflection

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
	"github.com/liqo-go/liqo/test/harness"
)

// TestTokensReflected checks the token reflection as the node's
// reflection runs it: an offloaded pod's token Secret is there, and a pod
// whose token Secret's name is taken on the provider backs off.
func TestTokensReflected(t *testing.T) {
	const ns = "tokens-reflected"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	twin := offload(ctx, t, ns)
	if err := consumer.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "taken"}}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, "the default ServiceAccount of "+ns, func() (bool, error) {
		_, err := consumerCS.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, client.IgnoreNotFound(err)
	})
	if err := consumer.Create(ctx, testPod(ns, "api")); err != nil {
		t.Fatal(err)
	}
	waitRunning(ctx, t, ns, twin, "api")
	s, err := getSecret(ctx, twin, forge.TokenSecretName("default", ""))
	if err != nil {
		t.Fatal(err)
	}
	if user, err := whoAmI(ctx, ns, s.Data[forge.TokenKey]); err != nil || user != "system:serviceaccount:"+ns+":default" {
		t.Errorf("the token authenticates as %q (%v)", user, err)
	}

	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: twin, Name: forge.TokenSecretName("taken", "")}}
	if err := provider.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	p := testPod(ns, "blocked")
	p.Spec.ServiceAccountName = "taken"
	if err := consumer.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, "the pod Pending with reason "+forge.ReasonOffloadingBackOff, func() (bool, error) {
		p, err := getPod(ctx, consumer, ns, "blocked")
		return err == nil && p.Status.Reason == forge.ReasonOffloadingBackOff &&
			strings.Contains(p.Status.Message, "not created by this cluster"), err
	})
}
