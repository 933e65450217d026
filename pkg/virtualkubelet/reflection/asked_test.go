package reflection

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/test/harness"
)

// TestOnlyAskedNamespaces lists in the provider's NamespaceMap, Accepted,
// namespaces this cluster did not offload there: one without a
// NamespaceOffloading, one whose NamespaceOffloading selects another
// cluster, and a reserved one (kube-*) that even asks for it. The map is in
// the provider's tenant namespace, within the provider's reach when it is
// our consumer too (issue 30): none of their Secrets reaches the provider,
// each gets a NamespaceNotReflected Event on the map, and the first is
// reflected as soon as its NamespaceOffloading selects the provider.
func TestOnlyAskedNamespaces(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const unasked, elsewhere, reserved = "unasked", "elsewhere", "kube-reflect"
	twins := map[string]string{}
	for _, ns := range []string{unasked, elsewhere, reserved} {
		twins[ns] = ns + "-" + consumerID
		for _, c := range []struct {
			cl   client.Client
			name string
		}{{consumer, ns}, {provider, twins[ns]}} {
			if err := c.cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.name}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := consumer.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: ns},
			StringData: map[string]string{"password": "local only"}}); err != nil {
			t.Fatal(err)
		}
	}
	selectProvider(ctx, t, elsewhere, "another-provider")
	selectProvider(ctx, t, reserved, providerID)
	for _, ns := range []string{unasked, elsewhere, reserved} {
		writeMapping(ctx, t, providerID, ns, twins[ns])
		t.Cleanup(func() { writeMapping(context.Background(), t, providerID, ns, "") })
	}

	for _, ns := range []string{unasked, elsewhere, reserved} {
		harness.Eventually(ctx, t, "a NamespaceNotReflected Event naming "+ns, func() (bool, error) {
			events, err := consumerCS.CoreV1().Events(consts.TenantNamespace(providerID)).List(ctx, metav1.ListOptions{
				FieldSelector: fields.OneTermEqualSelector("involvedObject.name", providerID).String()})
			if err != nil {
				return false, err
			}
			for _, e := range events.Items {
				if e.Reason == "NamespaceNotReflected" && strings.Contains(e.Message, "namespace "+ns+" ") {
					t.Logf("%s", e.Message)
					return true, nil
				}
			}
			return false, nil
		})
	}
	// Asked for now: reflected, which shows the refusal was the only
	// thing in the way.
	selectProvider(ctx, t, unasked, providerID)
	waitFor(ctx, t, "the Secret of "+unasked+" once its offloading selects the provider",
		types.NamespacedName{Namespace: twins[unasked], Name: "creds"}, func(*corev1.Secret) bool { return true })
	for _, ns := range []string{elsewhere, reserved} {
		var secrets corev1.SecretList
		if err := provider.List(ctx, &secrets, client.InNamespace(twins[ns])); err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets.Items {
			t.Errorf("Secret %s of namespace %s, which this cluster did not offload there, reached the provider in %s", s.Name, ns, s.Namespace)
		}
	}
}

// TestAskedHere is the NamespaceOffloading side of the check: the
// provider's OffloadingRequired condition, True, and nothing else.
func TestAskedHere(t *testing.T) {
	cond := func(provider string, status corev1.ConditionStatus) *offv1beta1.NamespaceOffloading {
		return &offv1beta1.NamespaceOffloading{Status: offv1beta1.NamespaceOffloadingStatus{
			RemoteNamespacesConditions: map[string]offv1beta1.RemoteNamespaceConditions{provider: {
				{Type: offv1beta1.NamespaceReady, Status: corev1.ConditionTrue},
				{Type: offv1beta1.NamespaceOffloadingRequired, Status: status}}}}}
	}
	for _, c := range []struct {
		name string
		nsof *offv1beta1.NamespaceOffloading
		want bool
	}{
		{"selected", cond("milan", corev1.ConditionTrue), true},
		{"not selected", cond("milan", corev1.ConditionFalse), false},
		{"another cluster selected", cond("naples", corev1.ConditionTrue), false},
		{"no status yet", &offv1beta1.NamespaceOffloading{}, false},
	} {
		if got := askedHere(c.nsof, "milan"); got != c.want {
			t.Errorf("%s: askedHere = %v, want %v", c.name, got, c.want)
		}
	}
}
