package remotecluster

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
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

// TestRegistry: one Cluster per provider and version of the credentials,
// whether asked for through the Identity or a VirtualNode naming its
// Secret; new credentials make a new Cluster and mark the old one stale;
// the peering gone, the provider is forgotten.
func TestRegistry(t *testing.T) {
	ctx := context.Background()
	ns, twin := consts.TenantNamespace("milan"), "liqo-tenant-rome"
	id := &authv1beta1.Identity{ObjectMeta: metav1.ObjectMeta{Name: consts.IdentityName("milan"), Namespace: ns},
		Spec: authv1beta1.IdentitySpec{Namespace: &twin}}
	id.Status.KubeconfigSecretRef = &corev1.LocalObjectReference{Name: "kc"}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kc", Namespace: ns},
		Data: map[string][]byte{consts.KubeconfigKey: kubeconfig(t, "https://milan.example:6443")}}
	cl := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(id, secret).Build()
	r := NewRegistry(cl, Options{Scheme: apis.NewScheme()})

	first, tenant, err := r.Tenant(ctx, "milan")
	if err != nil {
		t.Fatal(err)
	}
	if first.Config.Host != "https://milan.example:6443" || tenant != twin || first.Clientset == nil || first.Client == nil || first.Metrics == nil {
		t.Fatalf("cluster: host %s, tenant namespace %s, clients %v %v %v", first.Config.Host, tenant, first.Clientset, first.Client, first.Metrics)
	}
	if again, err := r.Get(ctx, "milan"); err != nil || again != first {
		t.Fatalf("the same credentials built another Cluster (%v)", err)
	}
	if vn, err := r.ForSecret(ctx, "milan", types.NamespacedName{Namespace: ns, Name: "kc"}); err != nil || vn != first {
		t.Fatalf("a virtual node with the Identity's Secret got another Cluster (%v)", err)
	}

	secret.Data[consts.KubeconfigKey] = kubeconfig(t, "https://milan.example:7443")
	if err := cl.Update(ctx, secret); err != nil {
		t.Fatal(err)
	}
	renewed, err := r.Get(ctx, "milan")
	if err != nil || renewed == first || renewed.Config.Host != "https://milan.example:7443" {
		t.Fatalf("after the credentials changed: %v, %v", renewed, err)
	}
	if !first.IsStale() || renewed.IsStale() || r.Len() != 1 {
		t.Fatalf("after the credentials changed: old stale %v, new stale %v, %d Clusters", first.IsStale(), renewed.IsStale(), r.Len())
	}

	if err := cl.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Get(ctx, "milan"); err == nil || r.Len() != 0 || !renewed.IsStale() {
		t.Fatalf("after the peering went: %v, %d Clusters kept, stale %v", err, r.Len(), renewed.IsStale())
	}
}

// TestSecretHandler: a kubeconfig Secret updated past a Cluster's version,
// or deleted, marks the Cluster stale at once; an event older than the
// version it was built from (a cache behind the API server) does not.
func TestSecretHandler(t *testing.T) {
	ctx := context.Background()
	key := types.NamespacedName{Namespace: consts.TenantNamespace("milan"), Name: "kc"}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace},
		Data: map[string][]byte{consts.KubeconfigKey: kubeconfig(t, "https://milan.example:6443")}}
	cl := fake.NewClientBuilder().WithObjects(secret).Build()
	r := NewRegistry(cl, Options{})
	c, err := r.ForSecret(ctx, "milan", key)
	if err != nil {
		t.Fatal(err)
	}
	h := r.SecretHandler().(toolscache.ResourceEventHandlerFuncs)
	at := func(rv string) *corev1.Secret {
		s := secret.DeepCopy()
		s.ResourceVersion = rv
		return s
	}
	h.OnUpdate(nil, at("1"))
	if c.IsStale() {
		t.Fatalf("an event of version 1 marked the Cluster of version %s stale", c.Version)
	}
	h.OnUpdate(nil, at(c.Version))
	if c.IsStale() {
		t.Fatal("an event of the Cluster's own version marked it stale")
	}
	h.OnUpdate(nil, at("99999"))
	if !c.IsStale() || r.Len() != 0 {
		t.Fatalf("a newer Secret left the Cluster current (stale %v, %d Clusters)", c.IsStale(), r.Len())
	}
	again, err := r.ForSecret(ctx, "milan", key)
	if err != nil || again == c {
		t.Fatalf("no new Cluster after the old one went stale (%v)", err)
	}
	h.OnDelete(secret)
	if !again.IsStale() || r.Len() != 0 {
		t.Fatal("a deleted Secret left its Cluster current")
	}
}
