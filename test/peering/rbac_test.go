package peering

import (
	"context"
	"strings"
	"testing"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/remotecluster"
)

// TestConsumerCredentials checks what rome's credentials on milan allow:
// only the peering's own objects in its own tenant namespace. It asks the
// API server's authorizer (SubjectAccessReview) and also makes real calls
// with the kubeconfig rome's controller manager uses.
func TestConsumerCredentials(t *testing.T) {
	peer(t, "rome", "milan")
	peer(t, "naples", "milan") // another tenant on the same provider
	ctx := context.Background()
	provider := tb.Cluster("milan").Client()
	user := consts.ConsumerUser("rome")
	own, other := consts.TenantNamespace("rome"), consts.TenantNamespace("naples")

	cases := []struct {
		name                             string
		verb, group, resource, namespace string
		allowed                          bool
	}{
		{"negotiate resources in its tenant namespace", "create", "authentication.liqo.io", "resourceslices", own, true},
		{"read its quota", "get", "offloading.liqo.io", "quotas", own, true},
		{"read its tenant", "get", "authentication.liqo.io", "tenants", own, true},
		{"no secrets in its tenant namespace", "list", "", "secrets", own, false},
		{"no secrets in default", "list", "", "secrets", "default", false},
		{"no secrets cluster-wide", "list", "", "secrets", "", false},
		{"no pods created directly", "create", "", "pods", own, false},
		{"no pods created directly in default", "create", "", "pods", "default", false},
		{"cannot edit its own tenant", "update", "authentication.liqo.io", "tenants", own, false},
		{"cannot edit its quota", "update", "offloading.liqo.io", "quotas", own, false},
		{"cannot set slice status", "update", "authentication.liqo.io", "resourceslices/status", own, false},
		{"no access to another tenant's slices", "list", "authentication.liqo.io", "resourceslices", other, false},
		{"no access to another tenant's tenant", "get", "authentication.liqo.io", "tenants", other, false},
		{"no namespaces", "create", "", "namespaces", "", false},
		{"no nodes", "list", "", "nodes", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, sub, _ := strings.Cut(c.resource, "/")
			sar := &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
				User: user, Groups: []string{consts.ConsumerGroup, "system:authenticated"},
				ResourceAttributes: &authzv1.ResourceAttributes{Verb: c.verb, Group: c.group, Resource: res, Subresource: sub, Namespace: c.namespace},
			}}
			got, err := provider.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Status.Allowed != c.allowed {
				t.Fatalf("%s %s/%s in %q: allowed=%v, want %v (%s)", c.verb, c.group, c.resource, c.namespace, got.Status.Allowed, c.allowed, got.Status.Reason)
			}
		})
	}

	t.Run("real calls with rome's kubeconfig", func(t *testing.T) {
		cfg := credentials(t, "rome", "milan")
		cs := kubernetes.NewForConfigOrDie(cfg)
		if _, err := cs.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("listing secrets in default: want Forbidden, got %v", err)
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "sneaky"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
		if _, err := cs.CoreV1().Pods(own).Create(ctx, pod, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("creating a pod: want Forbidden, got %v", err)
		}
		c, err := client.New(cfg, client.Options{Scheme: apis.NewScheme()})
		if err != nil {
			t.Fatal(err)
		}
		var slices authv1beta1.ResourceSliceList
		if err := c.List(ctx, &slices, client.InNamespace(other)); !apierrors.IsForbidden(err) {
			t.Errorf("listing naples' slices: want Forbidden, got %v", err)
		}
		if err := c.List(ctx, &slices, client.InNamespace(own)); err != nil || len(slices.Items) == 0 {
			t.Errorf("listing its own slices: want them, got %d (%v)", len(slices.Items), err)
		}
	})
}

// credentials returns the REST config consumer's controller manager uses on
// provider: the kubeconfig its Identity produced.
func credentials(t *testing.T, consumer, provider string) *rest.Config {
	t.Helper()
	secret, err := tb.Cluster(consumer).Client().CoreV1().Secrets(consts.TenantNamespace(provider)).
		Get(context.Background(), consts.KubeconfigSecretName(consts.IdentityName(provider)), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := remotecluster.RESTConfig(secret.Data[consts.KubeconfigKey])
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
