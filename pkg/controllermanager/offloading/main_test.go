package offloading

import (
	"context"
	"net/netip"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	"github.com/liqo-go/liqo/deploy/charts/liqo/crds"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/testbed"
)

var (
	// admin is an uncached client of the provider: what the tests check is
	// the API server's state.
	admin client.Client
	// providerConfig is the provider's admin configuration, which the
	// consumers' clients impersonate from.
	providerConfig *rest.Config
)

// testTwinRole is what the consumers may do in their twins here: a small
// stand-in for the manager's offloading ClusterRole.
const testTwinRole = "liqo-test-twin"

// testTwinOptions are the provider's bounds in these tests: small, so that
// a test reaches them with a handful of objects.
var testTwinOptions = TwinOptions{
	AllowedNames:  []string{"exact-name", "team-*"},
	ReservedNames: []string{"team-reserved"},
	MaxPerTenant:  3,
	Quota: func() corev1.ResourceList {
		q := DefaultTwinQuota()
		q[corev1.ResourceConfigMaps] = resource.MustParse("3")
		return q
	}(),
	Egress: EgressOptions{Mode: EgressPolicyDefault, AllowedCIDRs: []netip.Prefix{netip.MustParsePrefix("10.50.0.0/16")},
		Local: []netip.Prefix{netip.MustParsePrefix("10.244.0.0/16"), netip.MustParsePrefix("10.96.0.0/12")}},
}

// TestMain starts one provider cluster and, against it, a manager running
// the TwinReconciler under testTwinOptions.
func TestMain(m *testing.M) {
	testbed.Main(m, func(tb *testbed.Testbed) {
		testbed.Must(tb, startProvider(tb.Cluster("provider").Config))
	}, testbed.ClusterSpec{Name: "provider", Nodes: []testbed.NodePool{{Count: 1}}})
}

func startProvider(cfg *rest.Config) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := crds.Install(ctx, cfg); err != nil {
		return err
	}
	providerConfig = cfg
	var err error
	if admin, err = client.New(cfg, client.Options{Scheme: apis.NewScheme()}); err != nil {
		return err
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: testTwinRole}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps", "services"}, Verbs: []string{"get", "list", "create", "delete"}}}}
	if err := admin.Create(ctx, role); err != nil {
		return err
	}
	mgr, err := testbed.NewManager(cfg, cache.Options{})
	if err != nil {
		return err
	}
	if err := (&TwinReconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), ClusterRole: testTwinRole,
		Options: testTwinOptions}).SetupWithManager(mgr); err != nil {
		return err
	}
	return testbed.StartManager(ctx, mgr)
}

// newConsumer makes the tenant namespace of consumer, as peering does, with
// its Tenant and the consumer's right to keep NamespaceMaps there, and
// returns a client acting as that consumer.
func newConsumer(ctx context.Context, t *testing.T, consumer string) client.Client {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: consts.TenantNamespace(consumer), Labels: map[string]string{
		consts.TenantNamespaceLabel: "true", consts.RemoteClusterIDLabel: consumer, consts.ManagedByLabel: consts.ManagedByValue}}}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "consumer", Namespace: ns.Name}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"offloading.liqo.io"}, Resources: []string{"namespacemaps"}, Verbs: []string{"get", "list", "create", "update", "delete"}}}}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "consumer", Namespace: ns.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: consts.ConsumerUser(consumer)}}}
	// The Tenant is what keeps the consumer's maps valid (unpeering deletes
	// it); the TenantReconciler, which would check it, is not running here.
	tenant := &authv1beta1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: consumer, Namespace: ns.Name},
		Spec: authv1beta1.TenantSpec{ClusterID: corev1beta1.ClusterID(consumer)}}
	for _, o := range []client.Object{ns, role, rb, tenant} {
		if err := admin.Create(ctx, o); err != nil {
			t.Fatalf("creating %s of consumer %s: %v", o.GetName(), consumer, err)
		}
	}
	cfg := rest.CopyConfig(providerConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: consts.ConsumerUser(consumer), Groups: []string{consts.ConsumerGroup}}
	c, err := client.New(cfg, client.Options{Scheme: apis.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
