package peering

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/peeringuser"
	"github.com/liqo-go/liqo/pkg/peering"
	pu "github.com/liqo-go/liqo/pkg/peeringuser"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
)

// TestPeeringUser: milan's administrator generates a peering user for rome
// (liqoctl generate peering-user); rome's administrator peers and unpeers
// with its kubeconfig alone. The user may do what peering needs on milan
// and nothing else (the authorizer's answers, and real requests the policy
// refuses); once deleted, its kubeconfig is refused everything.
func TestPeeringUser(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	const ns, pod = "peering-user-demo", "hello"
	rome, milan := clusterClient(t, "rome"), clusterClient(t, "milan")
	tenantNS := consts.TenantNamespace("rome")
	kc := filepath.Join(t.TempDir(), "rome-on-milan.kubeconfig")
	admin := func(args ...string) string {
		t.Helper()
		out, err := run(ctx, append(args, "--kubeconfig", kubeconfigs["milan"])...)
		if err != nil {
			t.Fatalf("liqoctl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	admin("generate", "peering-user", "--consumer-cluster-id", "rome", "--output", kc)
	t.Cleanup(func() { cleanPeeringUsers(t, "rome") })
	var tenantNamespace corev1.Namespace
	if err := milan.Get(ctx, types.NamespacedName{Name: tenantNS}, &tenantNamespace); err != nil {
		t.Fatalf("the tenant namespace is not created up front: %v", err)
	}
	if tenantNamespace.Labels[peeringuser.Label] != "rome" || tenantNamespace.Labels[consts.PartOfLabel] != consts.PartOfValue {
		t.Errorf("tenant namespace labels: %v", tenantNamespace.Labels)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != tb.Cluster("milan").Config.Host || len(cfg.CAData) == 0 {
		t.Errorf("kubeconfig server %s with %d bytes of CA, want %s and the cluster's CA", cfg.Host, len(cfg.CAData), tb.Cluster("milan").Config.Host)
	}

	t.Run("the authorizer grants what peering needs and nothing else", func(t *testing.T) {
		checkRights(ctx, t, peeringuser.Name("rome"), bindingCases("rome"))
	})

	t.Run("peer, offload and unpeer with the kubeconfig", func(t *testing.T) {
		waitNodesReady(ctx, t, "milan")
		if out, err := run(ctx, "peer", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kc, "--networking-disabled"); err != nil {
			t.Fatalf("liqoctl peer with the peering user: %v\n%s", err, out)
		}
		waitNode(t, "rome", "milan", "Ready", testbed.NodeReady)

		createNamespace(t, ns)
		t.Cleanup(func() { deleteNamespace(t, "rome", ns) })
		if out, err := run(ctx, "offload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"], "--timeout", "60s"); err != nil {
			t.Fatalf("liqoctl offload: %v\n%s", err, out)
		}
		if err := rome.Create(ctx, helloPod(ns, pod, pod, corev1.NodeSelectorOpIn)); err != nil {
			t.Fatal(err)
		}
		if _, _, provider := waitOffloaded(ctx, t, rome, ns, pod); provider != "milan" {
			t.Fatalf("the pod runs on %s, want milan", provider)
		}

		// The network fabric's side of peering, with the same rights
		// (up to the tunnel, which needs real nodes); reset as admin:
		// unpeer leaves the fabric, as liqoctl unpeer does.
		reset := func() {
			if out, err := run(context.Background(), "network", "reset", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["milan"]); err != nil {
				t.Errorf("network reset: %v\n%s", err, out)
			}
		}
		out, err := run(ctx, "network", "connect", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kc,
			"--server-service-type", "NodePort", "--wait=false", "--timeout", "90s")
		if err != nil || !strings.Contains(out, "Public keys exchanged") {
			reset()
			t.Fatalf("network connect with the peering user: %v\n%s", err, out)
		}
		reset()

		// A cordoned tenant stays cordoned: the consumer may not lift it.
		admin("cordon", "tenant", "rome")
		user := userClient(t, cfg)
		var tenant authv1beta1.Tenant
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := user.Get(ctx, types.NamespacedName{Namespace: tenantNS, Name: "rome"}, &tenant); err != nil {
				return err
			}
			tenant.Spec.TenantCondition = authv1beta1.TenantActive
			return user.Update(ctx, &tenant)
		})
		if !refusedByPolicy(err) {
			t.Errorf("the peering user set its cordoned Tenant Active: want the policy's refusal, got %v", err)
		}
		if err := user.Delete(ctx, &tenant); !refusedByPolicy(err) {
			t.Errorf("the peering user deleted its cordoned Tenant: want the policy's refusal, got %v", err)
		}
		admin("uncordon", "tenant", "rome")
		// Nor write the nonce, nor make other Secrets.
		sneaky := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sneaky", Namespace: tenantNS}}
		if err := user.Create(ctx, sneaky); !refusedByPolicy(err) {
			t.Errorf("the peering user created Secret sneaky: want the policy's refusal, got %v", err)
		}
		var nonce corev1.Secret
		if err := user.Get(ctx, types.NamespacedName{Namespace: tenantNS, Name: consts.NonceSecret}, &nonce); err != nil {
			t.Fatal(err)
		}
		nonce.Data[consts.NonceKey] = []byte("chosen by the consumer")
		if err := user.Update(ctx, &nonce); !refusedByPolicy(err) {
			t.Errorf("the peering user wrote the nonce: want the policy's refusal, got %v", err)
		}
		// Nor keep a nonce valid for good (issue 30, finding 8): its issue
		// time and the validity of the one it replaced are annotations of
		// the provider's controller, and its label makes it rotate.
		for _, tc := range []struct {
			what string
			edit func(s *corev1.Secret)
		}{
			{"pushed its nonce's issue time a century ahead", func(s *corev1.Secret) {
				metav1.SetMetaDataAnnotation(&s.ObjectMeta, "liqo.io/nonce-issued-at", "2125-01-01T00:00:00Z")
			}},
			{"kept the replaced nonce valid for a century", func(s *corev1.Secret) {
				metav1.SetMetaDataAnnotation(&s.ObjectMeta, "liqo.io/previous-nonce-valid-until", "2125-01-01T00:00:00Z")
			}},
			{"took its nonce out of rotation", func(s *corev1.Secret) { delete(s.Labels, consts.NonceSecretLabel) }},
		} {
			var s corev1.Secret
			if err := user.Get(ctx, types.NamespacedName{Namespace: tenantNS, Name: consts.NonceSecret}, &s); err != nil {
				t.Fatal(err)
			}
			tc.edit(&s)
			if err := user.Update(ctx, &s); !refusedByPolicy(err) {
				t.Errorf("the peering user %s: want the policy's refusal, got %v", tc.what, err)
			}
		}
		// Nor more of the fabric's objects than the one of each, named
		// rome, that network connect made above.
		for _, extra := range extraFabricObjects(tenantNS, "rome-2") {
			if err := user.Create(ctx, extra); !refusedByPolicy(err) || !strings.Contains(err.Error(), "named after the consumer it peers (rome)") {
				t.Errorf("the peering user created %T %s: want the policy's refusal naming rome, got %v", extra, extra.GetName(), err)
			}
			if err := milan.Get(ctx, client.ObjectKeyFromObject(extra), extra); !apierrors.IsNotFound(err) {
				t.Errorf("%T %s exists on milan (%v)", extra, extra.GetName(), err)
			}
		}

		deleteNamespace(t, "rome", ns)
		waitNamespaceGone(t, "milan", ns+"-rome") // unoffloaded: the twin goes
		if out, err := run(ctx, "unpeer", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kc, "--delete-namespaces"); err != nil {
			t.Fatalf("liqoctl unpeer with the peering user: %v\n%s", err, out)
		} else if !strings.Contains(out, "kept for peering user "+peeringuser.Name("rome")) {
			t.Errorf("unpeer does not say the tenant namespace is kept for the peering user:\n%s", out)
		}
		waitGoneNode(ctx, t, "rome", "milan")
		var tenants authv1beta1.TenantList
		if err := milan.List(ctx, &tenants, client.InNamespace(tenantNS)); err != nil || len(tenants.Items) != 0 {
			t.Errorf("Tenants left on milan after unpeer: %d (%v)", len(tenants.Items), err)
		}
	})

	t.Run("deleted, the kubeconfig is refused everything", func(t *testing.T) {
		out := admin("delete", "peering-user", "--consumer-cluster-id", "rome")
		if !strings.Contains(out, "Tenant namespace "+tenantNS+" deleted") {
			t.Errorf("delete peering-user does not remove the unused tenant namespace:\n%s", out)
		}
		cs := kubernetes.NewForConfigOrDie(cfg)
		harness.Eventually(ctx, t, "the token refused", func() (bool, error) {
			_, err := cs.CoreV1().ConfigMaps(consts.DefaultNamespace).Get(ctx, consts.ClusterIDConfigMap, metav1.GetOptions{})
			return apierrors.IsUnauthorized(err), nil
		})
		if _, err := cs.CoreV1().Namespaces().Get(ctx, consts.DefaultNamespace, metav1.GetOptions{}); !apierrors.IsUnauthorized(err) {
			t.Errorf("reading namespace liqo with the deleted user's token: want 401, got %v", err)
		}
		for _, obj := range []client.Object{&corev1.ServiceAccount{}, &corev1.ConfigMap{}} {
			if err := milan.Get(ctx, types.NamespacedName{Namespace: consts.DefaultNamespace, Name: peeringuser.Name("rome")}, obj); !apierrors.IsNotFound(err) {
				t.Errorf("%T %s left: %v", obj, peeringuser.Name("rome"), err)
			}
		}
	})
}

// TestPeerCommandVerbatim runs the manual's steps: liqoctl generate
// peer-command on milan, the printed line on rome (with rome's kubeconfig,
// and without networking, which the simulated nodes cannot carry), then
// liqoctl unpeer out-of-band milan. The command is generic: rome claims
// it, and naples running the same line is refused.
func TestPeerCommandVerbatim(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cleanPeeringUsers(t, "rome") // as in TestPeerOutOfBandByTheManager
	t.Cleanup(func() { cleanPeeringUsers(t, "rome") })

	out, err := run(ctx, "generate", "peer-command", "--kubeconfig", kubeconfigs["milan"])
	if err != nil {
		t.Fatalf("liqoctl generate peer-command: %v\n%s", err, out)
	}
	if !strings.Contains(out, "Execute this command on a *different* cluster to enable an outgoing peering with the current cluster:") {
		t.Errorf("no explanation before the command:\n%s", out)
	}
	line := harness.PeerCommand(t, out)
	if !strings.HasPrefix(line, "liqoctl peer out-of-band milan --auth-url "+tb.Cluster("milan").Config.Host+" --cluster-id milan --auth-token ") {
		t.Fatalf("the command is not the manual's form: %s", line)
	}
	again, err := run(ctx, "generate", "peer-command", "--only-command", "--kubeconfig", kubeconfigs["milan"])
	if err != nil {
		t.Fatalf("liqoctl generate peer-command --only-command: %v\n%s", err, again)
	}
	if got := strings.TrimSpace(again); harness.PeerCommand(t, again) != line {
		t.Errorf("--only-command before any claim should print the same command, and only it; got:\n%s", got)
	}

	waitNodesReady(ctx, t, "milan")
	args := slices.Concat(strings.Fields(line)[1:], []string{"--kubeconfig", kubeconfigs["rome"], "--networking-disabled"})
	if out, err := run(ctx, args...); err != nil {
		t.Fatalf("%s on rome: %v\n%s", line, err, out)
	} else if !strings.Contains(out, "Controller manager: asking who the token is, and claiming the peering user") {
		t.Errorf("peer out-of-band does not report the manager's claim of the peering user:\n%s", out)
	}
	waitNode(t, "rome", "milan", "Ready", testbed.NodeReady)
	var fc corev1beta1.ForeignCluster
	if err := clusterClient(t, "rome").Get(ctx, types.NamespacedName{Name: "milan"}, &fc); err != nil {
		t.Errorf("no ForeignCluster milan on rome: %v", err)
	}
	if c := oobCondition(&fc); c == nil || c.Status != corev1beta1.EstablishedStatus || c.Reason != peering.ReasonPeered {
		t.Errorf("the ForeignCluster's %s condition: %+v, want Established (%s)", peering.OutOfBandCondition, c, peering.ReasonPeered)
	}

	t.Run("the same command on another cluster is refused", func(t *testing.T) {
		args := slices.Concat(strings.Fields(line)[1:], []string{"--kubeconfig", kubeconfigs["naples"], "--networking-disabled"})
		out, err := run(ctx, args...)
		if err == nil || !strings.Contains(err.Error(), `issued for cluster "rome"`) || !strings.Contains(err.Error(), peering.ReasonClaimedElsewhere) {
			t.Fatalf("want a refusal naming rome, got %v\n%s", err, out)
		}
		// Refused: the request is withdrawn, and nothing was kept.
		for _, name := range []string{peering.OutOfBandRequestSecret, peering.OutOfBandKubeconfigSecret} {
			key := types.NamespacedName{Namespace: consts.TenantNamespace("milan"), Name: name}
			if err := clusterClient(t, "naples").Get(ctx, key, &corev1.Secret{}); !apierrors.IsNotFound(err) {
				t.Errorf("Secret %s left on naples: %v", key, err)
			}
		}
	})

	t.Run("claimed, the user holds no cluster-wide right", func(t *testing.T) {
		name := userOfCommand(t, line)
		checkRights(ctx, t, name, []rightCase{
			{"no namespaces created", "create", "", "namespaces", "", "", false},
			{"no bindings created", "create", "rbac.authorization.k8s.io", "rolebindings", consts.TenantNamespace("rome"), "", false},
			{"its tenant namespace", "get", "", "namespaces", consts.TenantNamespace("rome"), consts.TenantNamespace("rome"), true},
			{"its Tenant", "create", "authentication.liqo.io", "tenants", consts.TenantNamespace("rome"), "", true},
			{"no Secrets of another tenant", "get", "", "secrets", consts.TenantNamespace("naples"), consts.NonceSecret, false},
		})
	})

	t.Run("unpeer out-of-band", func(t *testing.T) {
		out, err := run(ctx, "unpeer", "out-of-band", "milan", "--kubeconfig", kubeconfigs["rome"], "--delete-namespaces")
		if err != nil {
			t.Fatalf("liqoctl unpeer out-of-band milan: %v\n%s", err, out)
		}
		waitGoneNode(ctx, t, "rome", "milan")
		if strings.Contains(out, "not removed on the remote cluster") {
			t.Errorf("unpeer out-of-band left objects on milan:\n%s", out)
		}
		err = clusterClient(t, "rome").Get(ctx, types.NamespacedName{Name: consts.TenantNamespace("milan")}, &corev1.Namespace{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("rome's tenant namespace for milan (with the kept kubeconfig) left: %v", err)
		}
	})
}

// TestGenericPeeringUserPolicy: a generic user may claim itself once, for
// a cluster ID, and then create that cluster's tenant namespace and bind
// its own rights there, and nothing else; the policy refuses the rest.
func TestGenericPeeringUserPolicy(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const claimed = "verona"
	t.Cleanup(func() { cleanPeeringUsers(t, claimed) })
	out, err := run(ctx, "generate", "peer-command", "--only-command", "--kubeconfig", kubeconfigs["milan"])
	if err != nil {
		t.Fatalf("liqoctl generate peer-command: %v\n%s", err, out)
	}
	line := harness.PeerCommand(t, out)
	name := userOfCommand(t, line)
	tok, err := pu.ParseToken(harness.FlagOf(t, line, "--auth-token"))
	if err != nil {
		t.Fatal(err)
	}
	user := userClient(t, tok.RESTConfig(harness.FlagOf(t, line, "--auth-url")))
	tenantNS := func(id, user string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: consts.TenantNamespace(id), Labels: peeringuser.TenantNamespaceLabels(id, user)}}
	}
	u := strings.TrimPrefix(name, "liqo-peer-")
	dry := client.DryRunAll

	if err := user.Create(ctx, tenantNS("rome", u), dry); !refusedByPolicy(err) {
		t.Errorf("unclaimed, the user created a tenant namespace: want the policy's refusal, got %v", err)
	}
	var claim corev1.ConfigMap
	key := types.NamespacedName{Namespace: consts.DefaultNamespace, Name: name}
	if err := user.Get(ctx, key, &claim); err != nil {
		t.Fatal(err)
	}
	bad := claim.DeepCopy()
	bad.Data[peeringuser.ClaimKey] = "Not_A_Cluster_ID"
	if err := user.Update(ctx, bad, dry); !refusedByPolicy(err) {
		t.Errorf("claimed for an invalid cluster ID: want the policy's refusal, got %v", err)
	}
	unlabelled := claim.DeepCopy()
	unlabelled.Data[peeringuser.ClaimKey] = claimed
	delete(unlabelled.Labels, peeringuser.Label)
	if err := user.Update(ctx, unlabelled, dry); !refusedByPolicy(err) {
		t.Errorf("the claim dropped its label (and with it the policy): want the policy's refusal, got %v", err)
	}
	claim.Data[peeringuser.ClaimKey] = claimed
	if err := user.Update(ctx, &claim); err != nil {
		t.Fatalf("claiming: %v", err)
	}
	harness.Eventually(ctx, t, "the policy to see the claim", func() (bool, error) {
		return user.Create(ctx, tenantNS(claimed, u), dry) == nil, nil
	})
	claim.Data[peeringuser.ClaimKey] = "rome"
	if err := user.Update(ctx, &claim); !refusedByPolicy(err) {
		t.Errorf("claimed a second time: want the policy's refusal, got %v", err)
	}
	for _, c := range []struct {
		what string
		ns   *corev1.Namespace
	}{
		{"another cluster's tenant namespace", tenantNS("rome", u)},
		{"a namespace that is no tenant namespace", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-sneaky"}}},
		{"its tenant namespace without its label", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: consts.TenantNamespace(claimed)}}},
	} {
		if err := user.Create(ctx, c.ns, dry); !refusedByPolicy(err) {
			t.Errorf("created %s: want the policy's refusal, got %v", c.what, err)
		}
	}
	// A binding: only its own ClusterRole, to itself, in the namespace it
	// created; not in a tenant namespace someone else made.
	if err := user.Create(ctx, tenantNS(claimed, u)); err != nil {
		t.Fatal(err)
	}
	binding := func(ns, role, subject string) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: ns},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: subject, Namespace: consts.DefaultNamespace}}}
	}
	for _, c := range []struct {
		what    string
		obj     *rbacv1.RoleBinding
		allowed bool
	}{
		{"cluster-admin to itself", binding(consts.TenantNamespace(claimed), "cluster-admin", name), false},
		{"its role to another ServiceAccount", binding(consts.TenantNamespace(claimed), name, "default"), false},
		{"its role in another namespace", binding("default", name, name), false},
		{"its role to itself in its namespace", binding(consts.TenantNamespace(claimed), name, name), true},
	} {
		err := user.Create(ctx, c.obj, dry)
		if c.allowed && err != nil {
			t.Errorf("%s: refused: %v", c.what, err)
		}
		if !c.allowed && err == nil {
			t.Errorf("%s: allowed", c.what)
		}
	}

}

// rightCase is one SubjectAccessReview: may the user verb the resource?
type rightCase struct {
	what                                   string
	verb, group, resource, namespace, name string
	allowed                                bool
}

// bindingCases is what a user bound to consumer may and may not do on milan.
func bindingCases(consumer string) []rightCase {
	own, other, liqo := consts.TenantNamespace(consumer), consts.TenantNamespace("naples"), consts.DefaultNamespace
	auth, net := "authentication.liqo.io", "networking.liqo.io"
	return []rightCase{
		{"read the cluster ID", "get", "", "configmaps", liqo, consts.ClusterIDConfigMap, true},
		{"read the manager's lease", "get", "coordination.k8s.io", "leases", liqo, consts.ControllerManagerLease, true},
		{"read the Liqo namespace", "get", "", "namespaces", liqo, liqo, true},
		{"read its tenant namespace", "get", "", "namespaces", own, own, true},
		{"create the nonce Secret", "create", "", "secrets", own, "", true},
		{"read the nonce", "get", "", "secrets", own, consts.NonceSecret, true},
		{"create its Tenant", "create", auth, "tenants", own, "", true},
		{"update its Tenant", "update", auth, "tenants", own, consumer, true},
		{"delete its Tenant", "delete", auth, "tenants", own, consumer, true},
		{"list its ResourceSlices", "list", auth, "resourceslices", own, "", true},
		{"create its GatewayServer", "create", net, "gatewayservers", own, "", true},
		{"read the gateway server's key", "get", "", "secrets", own, "gw-" + consumer, true},
		{"give the gateway server its peer's key", "update", net, "publickeies", own, consumer, true},
		{"read the pod CIDR", "get", "ipam.liqo.io", "networks", liqo, "pod-cidr", true},

		{"no Secrets listed cluster-wide", "list", "", "secrets", "", "", false},
		{"no Secrets listed in its namespace", "list", "", "secrets", own, "", false},
		{"no other Secret of its namespace", "get", "", "secrets", own, consts.KubeconfigSecretName(consts.IdentityName(consumer)), false},
		{"no Secrets of the Liqo namespace", "get", "", "secrets", liqo, "liqo-cluster-identity", false},
		{"no Secrets of another tenant", "list", "", "secrets", other, "", false},
		{"no nonce of another tenant", "get", "", "secrets", other, consts.NonceSecret, false},
		{"no Pods in its namespace", "create", "", "pods", own, "", false},
		{"no Pods in default", "create", "", "pods", "default", "", false},
		{"no Pods listed", "list", "", "pods", "", "", false},
		{"no other tenant's Tenant", "get", auth, "tenants", other, "naples", false},
		{"no Tenants created elsewhere", "create", auth, "tenants", other, "", false},
		{"no Tenant status", "update", auth, "tenants/status", own, consumer, false},
		{"no namespaces created", "create", "", "namespaces", "", "", false},
		{"no other namespace", "get", "", "namespaces", other, other, false},
		{"its namespace not deleted", "delete", "", "namespaces", own, own, false},
		{"no other ConfigMap", "get", "", "configmaps", liqo, "kube-root-ca.crt", false},
		{"its claim not changed", "update", "", "configmaps", liqo, peeringuser.Name(consumer), false},
		{"no bindings", "create", "rbac.authorization.k8s.io", "rolebindings", own, "", false},
		{"no cluster-admin", "bind", "rbac.authorization.k8s.io", "clusterroles", "", "cluster-admin", false},
		{"no nodes", "list", "", "nodes", "", "", false},
	}
}

// checkRights asks milan's authorizer each case for the peering user name.
func checkRights(ctx context.Context, t *testing.T, name string, cases []rightCase) {
	t.Helper()
	cs := tb.Cluster("milan").Client()
	for _, c := range cases {
		t.Run(c.what, func(t *testing.T) {
			res, sub, _ := strings.Cut(c.resource, "/")
			sar := &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
				User:   "system:serviceaccount:" + consts.DefaultNamespace + ":" + name,
				Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + consts.DefaultNamespace, "system:authenticated"},
				ResourceAttributes: &authzv1.ResourceAttributes{Verb: c.verb, Group: c.group, Resource: res, Subresource: sub,
					Namespace: c.namespace, Name: c.name},
			}}
			got, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Status.Allowed != c.allowed {
				t.Errorf("%s %s %s/%s in %q: allowed=%v, want %v (%s)", c.verb, c.resource, c.group, c.name, c.namespace, got.Status.Allowed, c.allowed, got.Status.Reason)
			}
		})
	}
}

// TestPeerOutOfBandRefusals: the consumer's controller manager refuses a
// token whose CA is not the server's before any request reaches the
// server, and a provider whose cluster ID is not --cluster-id before the
// user is claimed; liqoctl reports the manager's reason. A garbled token
// or NAME is refused by liqoctl before anything is recorded.
func TestPeerOutOfBandRefusals(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	t.Cleanup(func() { cleanPeeringUsers(t, "") })
	out, err := run(ctx, "generate", "peer-command", "--only-command", "--kubeconfig", kubeconfigs["milan"])
	if err != nil {
		t.Fatalf("liqoctl generate peer-command: %v\n%s", err, out)
	}
	line := harness.PeerCommand(t, out)
	tok, err := pu.ParseToken(harness.FlagOf(t, line, "--auth-token"))
	if err != nil {
		t.Fatal(err)
	}
	naplesCA := tb.Cluster("naples").Config.CAData
	if len(naplesCA) == 0 {
		t.Fatal("no CA in naples' configuration")
	}
	oob := func(url, id, token string) (string, error) {
		return run(ctx, "peer", "out-of-band", id, "--auth-url", url, "--cluster-id", id, "--auth-token", token,
			"--kubeconfig", kubeconfigs["rome"], "--networking-disabled", "--timeout", "30s")
	}

	t.Run("a server that is not the token's", func(t *testing.T) {
		var requests atomic.Int32
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			requests.Add(1)
			http.Error(w, "no", http.StatusTeapot)
		}))
		srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
		srv.StartTLS()
		defer srv.Close()
		out, err := oob(srv.URL, "milan", tok.String())
		if err == nil || !strings.Contains(err.Error(), "refusing to send the token") || !strings.Contains(err.Error(), "("+peering.ReasonUntrustedServer+")") {
			t.Errorf("want the manager's refusal to send the token, got %v\n%s", err, out)
		}
		if n := requests.Load(); n != 0 {
			t.Errorf("the server got %d requests", n)
		}
	})

	t.Run("a token whose CA was replaced", func(t *testing.T) {
		tampered := pu.Token{CA: naplesCA, Bearer: tok.Bearer}
		out, err := oob(harness.FlagOf(t, line, "--auth-url"), "milan", tampered.String())
		if err == nil || !strings.Contains(err.Error(), "refusing to send the token") || !strings.Contains(err.Error(), "altered") {
			t.Errorf("want a refusal naming an altered token, got %v\n%s", err, out)
		}
	})

	t.Run("a garbled token", func(t *testing.T) {
		out, err := oob(harness.FlagOf(t, line, "--auth-url"), "milan", "x"+tok.String())
		if err == nil || !strings.Contains(err.Error(), "--auth-token") {
			t.Errorf("want an error naming --auth-token, got %v\n%s", err, out)
		}
	})

	t.Run("a provider that is not --cluster-id", func(t *testing.T) {
		out, err := oob(harness.FlagOf(t, line, "--auth-url"), "naples", tok.String())
		if err == nil || !strings.Contains(err.Error(), `is cluster "milan", not "naples"`) {
			t.Errorf("want a refusal naming both clusters, got %v\n%s", err, out)
		}
		var claim corev1.ConfigMap
		key := types.NamespacedName{Namespace: consts.DefaultNamespace, Name: userOfCommand(t, line)}
		if err := clusterClient(t, "milan").Get(ctx, key, &claim); err != nil || claim.Data[peeringuser.ClaimKey] != "" {
			t.Errorf("the refused peering claimed the user: %v (%v)", claim.Data, err)
		}
	})

	t.Run("NAME that is not the cluster ID", func(t *testing.T) {
		out, err := run(ctx, "peer", "out-of-band", "florence", "--auth-url", harness.FlagOf(t, line, "--auth-url"), "--cluster-id", "milan",
			"--auth-token", tok.String(), "--kubeconfig", kubeconfigs["rome"])
		if err == nil || !strings.Contains(err.Error(), `NAME must be "milan"`) {
			t.Errorf("want a refusal of NAME, got %v\n%s", err, out)
		}
	})
}

// oobCondition is the manager's out-of-band condition on fc, if any.
func oobCondition(fc *corev1beta1.ForeignCluster) *corev1beta1.Condition {
	for i := range fc.Status.Conditions {
		if c := &fc.Status.Conditions[i]; c.Type == peering.OutOfBandCondition {
			return c
		}
	}
	return nil
}

// peerLine is the liqoctl peer out-of-band line of generate peer-command's
// output.
// userOfCommand is the peering user the command's token authenticates.
func userOfCommand(t *testing.T, line string) string {
	t.Helper()
	tok, err := pu.ParseToken(harness.FlagOf(t, line, "--auth-token"))
	if err != nil {
		t.Fatal(err)
	}
	id, err := pu.WhoAmI(context.Background(), kubernetes.NewForConfigOrDie(tok.RESTConfig(harness.FlagOf(t, line, "--auth-url"))))
	if err != nil {
		t.Fatal(err)
	}
	return id.Name
}

func userClient(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{Scheme: apis.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// extraFabricObjects are a valid Configuration, GatewayServer and
// PublicKey named name in ns: what a peering user would add to the fabric's
// one of each.
func extraFabricObjects(ns, name string) []client.Object {
	meta := metav1.ObjectMeta{Name: name, Namespace: ns}
	return []client.Object{
		&netv1beta1.Configuration{ObjectMeta: meta, Spec: netv1beta1.ConfigurationSpec{Remote: netv1beta1.ClusterConfig{
			CIDR: netv1beta1.ClusterConfigCIDR{Pod: []netv1beta1.CIDR{"10.91.0.0/16"}, External: []netv1beta1.CIDR{"10.92.0.0/16"}}}}},
		&netv1beta1.GatewayServer{ObjectMeta: meta},
		&netv1beta1.PublicKey{ObjectMeta: meta, Spec: netv1beta1.PublicKeySpec{PublicKey: make([]byte, 32)}},
	}
}

// refusedByPolicy tells whether err is the peering-user policy's refusal.
func refusedByPolicy(err error) bool {
	return apierrors.IsForbidden(err) && strings.Contains(err.Error(), peeringuser.PolicyMessage)
}

func deleteNamespace(t *testing.T, cluster, ns string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = clusterClient(t, cluster).Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	waitNamespaceGone(t, cluster, ns)
}

func waitNamespaceGone(t *testing.T, cluster, ns string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := clusterClient(t, cluster)
	harness.Eventually(ctx, t, "namespace "+ns+" gone from "+cluster, func() (bool, error) {
		err := c.Get(ctx, types.NamespacedName{Name: ns}, &corev1.Namespace{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

func waitGoneNode(ctx context.Context, t *testing.T, cluster, name string) {
	t.Helper()
	c := clusterClient(t, cluster)
	harness.Eventually(ctx, t, "virtual node "+name+" gone from "+cluster, func() (bool, error) {
		err := c.Get(ctx, types.NamespacedName{Name: name}, &corev1.Node{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// cleanPeeringUsers leaves milan as the test found it: no peering from
// rome left (unpeered with milan's admin kubeconfig), no peering user of
// consumer, no unclaimed one. The policy and its binding stay, as liqoctl
// leaves them: deleting the binding would stop the API server's ConfigMap
// informer for admission policies for good (kubernetes/kubernetes#130887),
// and the policy would no longer see later peering users' claims.
func cleanPeeringUsers(t *testing.T, consumer string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if consumer == "rome" {
		if err := clusterClient(t, "rome").Get(ctx, types.NamespacedName{Name: "milan"}, &corev1.Node{}); err == nil {
			if out, err := run(ctx, "unpeer", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["milan"]); err != nil {
				t.Errorf("unpeer: %v\n%s", err, out)
			}
		}
	}
	if consumer != "" {
		if out, err := run(ctx, "delete", "peering-user", "--consumer-cluster-id", consumer, "--kubeconfig", kubeconfigs["milan"]); err != nil &&
			!strings.Contains(err.Error(), "no peering user") {
			t.Errorf("delete peering-user: %v\n%s", err, out)
		}
	}
	if out, err := run(ctx, "delete", "peering-user", "--unclaimed", "--kubeconfig", kubeconfigs["milan"]); err != nil {
		t.Errorf("delete peering-user --unclaimed: %v\n%s", err, out)
	}
	var claims corev1.ConfigMapList
	if err := clusterClient(t, "milan").List(ctx, &claims, client.HasLabels{peeringuser.Label}); err != nil || len(claims.Items) > 0 {
		t.Errorf("peering users left: %d (%v)", len(claims.Items), err)
	}
	if consumer != "" {
		deleteNamespace(t, "milan", consts.TenantNamespace(consumer))
	}
}
