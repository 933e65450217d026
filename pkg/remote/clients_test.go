package remote

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/liqo-go/liqo/apis"
	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

func kubeconfig(t *testing.T, server string) []byte {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["p"] = &clientcmdapi.Cluster{Server: server}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "t"}
	cfg.Contexts["p"] = &clientcmdapi.Context{Cluster: "p", AuthInfo: "u"}
	cfg.CurrentContext = "p"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestClients: one Conn per version of a provider's credentials, rebuilt
// when they change, forgotten with the peering.
func TestClients(t *testing.T) {
	ctx := context.Background()
	ns, twin := consts.TenantNamespace("milan"), "liqo-tenant-rome"
	id := &authv1beta1.Identity{ObjectMeta: metav1.ObjectMeta{Name: consts.IdentityName("milan"), Namespace: ns},
		Spec: authv1beta1.IdentitySpec{Namespace: &twin}}
	id.Status.KubeconfigSecretRef = &corev1.LocalObjectReference{Name: "kc"}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kc", Namespace: ns},
		Data: map[string][]byte{consts.KubeconfigKey: kubeconfig(t, "https://milan.example:6443")}}
	cl := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(id, secret).Build()
	c := &Clients{Reader: cl, Scheme: apis.NewScheme()}

	first, err := c.Get(ctx, "milan")
	if err != nil {
		t.Fatal(err)
	}
	if first.Config.Host != "https://milan.example:6443" || first.Namespace != twin || first.Clientset == nil || first.Client == nil {
		t.Fatalf("conn: host %s, namespace %s, clients %v %v", first.Config.Host, first.Namespace, first.Clientset, first.Client)
	}
	if again, err := c.Get(ctx, "milan"); err != nil || again != first {
		t.Fatalf("the same credentials built new clients (%v)", err)
	}
	secret.Data[consts.KubeconfigKey] = kubeconfig(t, "https://milan.example:7443")
	if err := cl.Update(ctx, secret); err != nil {
		t.Fatal(err)
	}
	renewed, err := c.Get(ctx, "milan")
	if err != nil || renewed == first || renewed.Config.Host != "https://milan.example:7443" {
		t.Fatalf("after the credentials changed: %v, %v", renewed, err)
	}
	if err := cl.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "milan"); err == nil || c.Len() != 0 {
		t.Fatalf("after the peering went: %v, %d providers kept", err, c.Len())
	}
}
