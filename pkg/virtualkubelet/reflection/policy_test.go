package reflection

import (
	"context"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/remotecluster"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
	"github.com/liqo-go/liqo/test/harness"
)

// TestForbiddenKind: a provider that does not let the consumer touch one
// kind (an older provider's role) still gets the others' copies.
func TestForbiddenKind(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const ns = "partial"
	twin := ns + "-" + consumerID
	if err := provider.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: twin}}); err != nil {
		t.Fatal(err)
	}
	reflectInto(ctx, t, "restricted", ns, twin, restrictedIdentity(ctx, t, twin), nil)
	if err := consumer.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns},
		Data: map[string]string{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	waitFor[corev1.ConfigMap](ctx, t, "the ConfigMap copy despite the forbidden Ingresses", types.NamespacedName{Namespace: twin, Name: "settings"}, nil)
}

// TestAllowList: with a kind's policy AllowList, only the objects
// annotated liqo.io/allow-reflection are copied.
func TestAllowList(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const ns = "allowlist"
	twin := ns + "-" + consumerID
	if err := provider.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: twin}}); err != nil {
		t.Fatal(err)
	}
	kinds := DefaultKinds()
	kinds[Secrets] = KindOptions{Workers: 2, Policy: forge.AllowList}
	reflectInto(ctx, t, "selective", ns, twin, providerConfig, kinds)
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: "unmarked", Namespace: ns}},
		{ObjectMeta: metav1.ObjectMeta{Name: "marked", Namespace: ns, Annotations: map[string]string{forge.AllowReflectionAnnotation: "true"}}},
	} {
		if err := consumer.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	waitFor[corev1.Secret](ctx, t, "the allowed Secret's copy", types.NamespacedName{Namespace: twin, Name: "marked"}, nil)
	if err := provider.Get(ctx, types.NamespacedName{Namespace: twin, Name: "unmarked"}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Secret without the annotation was reflected (err %v)", err)
	}
}

// reflectInto runs, for the rest of the test, the reflection of a virtual
// node of another provider that maps the new local namespace ns to twin,
// with the given remote identity and kinds (nil: the defaults).
func reflectInto(ctx context.Context, t *testing.T, providerID, ns, twin string, remote *rest.Config, kinds map[string]KindOptions) {
	t.Helper()
	for _, name := range []string{ns, consts.TenantNamespace(providerID)} {
		if err := consumer.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	rc, err := remotecluster.New(providerID, "", remote, remotecluster.Options{Scheme: apis.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- Run(rctx, Config{NodeName: "virtual-" + providerID, LocalClusterID: consumerID, ProviderID: providerID,
			Local: consumerCS, LocalCluster: localCluster, Maps: mapCache, Remote: rc, Scheme: apis.NewScheme(),
			Recorder: &record.FakeRecorder{}, Kinds: kinds})
	}()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("the reflection of %s ended with %v", providerID, err)
		}
	})
	setMappingOf(ctx, t, providerID, ns, twin)
}

// restrictedIdentity is a provider identity that may do in the twin
// namespace all the reflection does but touch Ingresses.
func restrictedIdentity(ctx context.Context, t *testing.T, twin string) *rest.Config {
	t.Helper()
	all := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "no-ingresses", Namespace: twin}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"offloading.liqo.io"}, Resources: []string{"shadowpods", "shadowendpointslices"}, Verbs: all},
		{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets", "services", "pods", "events"}, Verbs: all},
	}}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "consumer", Namespace: twin}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "no-ingresses", Namespace: twin},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: twin}}}
	for _, o := range []client.Object{role, sa, binding} {
		if err := provider.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	tok, err := providerCS.CoreV1().ServiceAccounts(twin).CreateToken(ctx, sa.Name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.AnonymousClientConfig(providerConfig)
	cfg.BearerToken = tok.Status.Token
	harness.Eventually(ctx, t, "the restricted identity allowed ConfigMaps", func() (bool, error) {
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return false, err
		}
		_, err = cs.CoreV1().ConfigMaps(twin).List(ctx, metav1.ListOptions{})
		return err == nil, nil
	})
	return cfg
}
