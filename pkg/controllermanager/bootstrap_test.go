package controllermanager

import (
	"context"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/liqo-go/liqo/deploy/charts/liqo/files/rbac"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
)

// TestPeeringClusterRoles applies the generated peering ClusterRoles on a
// real API server as bootstrap does, and checks what one of them grants.
func TestPeeringClusterRoles(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tb, err := testbed.Start(ctx, testbed.Options{}, testbed.ClusterSpec{Name: "rbac"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tb.Stop)
	cluster := tb.Clusters[0]
	t.Run("applied with our labels, and again over an edit", func(t *testing.T) {
		ensureClusterRoleTwice(ctx, t, cluster.Client())
	})
	t.Run("the offloading role grants no ServiceAccounts", func(t *testing.T) {
		offloadingRoleGrantsNoServiceAccounts(ctx, t, cluster)
	})
}

// offloadingRoleGrantsNoServiceAccounts installs the ClusterRole a
// consumer gets in its twin namespaces, binds it as the provider does, and
// asks the authorizer (and the API, impersonating the consumer) what the
// consumer may do with ServiceAccounts there: nothing. A ServiceAccount of
// the consumer's making in a twin would be one the provider's own token
// machinery serves.
func offloadingRoleGrantsNoServiceAccounts(ctx context.Context, t *testing.T, cluster *testbed.Cluster) {
	cs := cluster.Client()
	if err := ensureClusterRole(ctx, cs, OffloadingClusterRole); err != nil {
		t.Fatal(err)
	}
	const twin = "shop-rome"
	user := consts.ConsumerUser("rome")
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: twin}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "liqo-consumer-offloading", Namespace: twin},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: OffloadingClusterRole},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}
	if _, err := cs.RbacV1().RoleBindings(twin).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	allowed := func(verb, group, resource, subresource string) (bool, string) {
		sar := &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
			User: user, Groups: []string{consts.ConsumerGroup, "system:authenticated"},
			ResourceAttributes: &authzv1.ResourceAttributes{Verb: verb, Group: group, Resource: resource, Subresource: subresource, Namespace: twin},
		}}
		got, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got.Status.Allowed, got.Status.Reason
	}
	// The binding reaches the authorizer's cache shortly after: the
	// rights the role must grant say when.
	harness.Eventually(ctx, t, "the consumer's binding in force", func() (bool, error) {
		ok, _ := allowed("create", "offloading.liqo.io", "shadowpods", "")
		return ok, nil
	})
	if ok, _ := allowed("create", "", "secrets", ""); !ok {
		t.Error("the consumer may not create Secrets in its twin: the reflection needs to")
	}
	for _, verb := range []string{"create", "update", "patch", "delete", "get", "list"} {
		if ok, reason := allowed(verb, "", "serviceaccounts", ""); ok {
			t.Errorf("the consumer may %s ServiceAccounts in its twin (%s)", verb, reason)
		}
	}
	if ok, reason := allowed("create", "", "serviceaccounts", "token"); ok {
		t.Errorf("the consumer may request tokens of the provider's ServiceAccounts (%s)", reason)
	}

	cfg := rest.CopyConfig(cluster.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{consts.ConsumerGroup}}
	asConsumer := kubernetes.NewForConfigOrDie(cfg)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "builder"}}
	if _, err := asConsumer.CoreV1().ServiceAccounts(twin).Create(ctx, sa, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the consumer creating a ServiceAccount in its twin: err = %v, want Forbidden", err)
	}
}

// ensureClusterRoleTwice applies a generated peering ClusterRole with our
// labels, applies it again over rules someone else edited, and leaves it
// alone once it is as generated.
func ensureClusterRoleTwice(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	want, err := rbac.ClusterRole(ConsumerClusterRole)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string) {
		t.Helper()
		got, err := cs.RbacV1().ClusterRoles().Get(ctx, ConsumerClusterRole, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(got.Rules, want.Rules) {
			t.Errorf("%s: rules %+v, want the generated %+v", what, got.Rules, want.Rules)
		}
		if got.Labels[consts.ManagedByLabel] != consts.ManagedByValue || got.Labels[consts.PartOfLabel] != consts.PartOfValue {
			t.Errorf("%s: labels %v", what, got.Labels)
		}
	}
	if err := ensureClusterRole(ctx, cs, ConsumerClusterRole); err != nil {
		t.Fatal(err)
	}
	check("created")

	edited, err := cs.RbacV1().ClusterRoles().Get(ctx, ConsumerClusterRole, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	edited.Rules = append(edited.Rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}})
	if _, err := cs.RbacV1().ClusterRoles().Update(ctx, edited, metav1.UpdateOptions{FieldManager: "someone"}); err != nil {
		t.Fatal(err)
	}
	if err := ensureClusterRole(ctx, cs, ConsumerClusterRole); err != nil {
		t.Fatal(err)
	}
	check("applied over an edit")
	before, err := cs.RbacV1().ClusterRoles().Get(ctx, ConsumerClusterRole, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ensureClusterRole(ctx, cs, ConsumerClusterRole); err != nil {
		t.Fatal(err)
	}
	if after, err := cs.RbacV1().ClusterRoles().Get(ctx, ConsumerClusterRole, metav1.GetOptions{}); err != nil || after.ResourceVersion != before.ResourceVersion {
		t.Errorf("a ClusterRole found as generated was written again (%v)", err)
	}
	if err := ensureClusterRole(ctx, cs, "liqo-nothing"); err == nil {
		t.Error("a ClusterRole that is not generated: no error")
	}
}
