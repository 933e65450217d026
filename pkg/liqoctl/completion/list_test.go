package completion

import (
	"context"
	"slices"
	"testing"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/liqo-go/liqo/apis"
	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
)

// TestListsFromCluster: what each completion reads from the cluster, with
// its descriptions, and the filtering by the word typed and the arguments
// already given.
func TestListsFromCluster(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "liqo-demo"}},
		&offv1beta1.NamespaceOffloading{ObjectMeta: metav1.ObjectMeta{Namespace: "liqo-demo", Name: "offloading"}},
		&corev1beta1.ForeignCluster{ObjectMeta: metav1.ObjectMeta{Name: "milan"}, Spec: corev1beta1.ForeignClusterSpec{ClusterID: "milan"},
			Status: corev1beta1.ForeignClusterStatus{Role: corev1beta1.ProviderRole}},
		&corev1beta1.ForeignCluster{ObjectMeta: metav1.ObjectMeta{Name: "paris"}, Spec: corev1beta1.ForeignClusterSpec{ClusterID: "paris"},
			Status: corev1beta1.ForeignClusterStatus{Role: corev1beta1.ConsumerAndProviderRole}},
		&authv1beta1.Tenant{ObjectMeta: metav1.ObjectMeta{Namespace: "liqo-tenant-rome", Name: "rome"},
			Spec: authv1beta1.TenantSpec{ClusterID: "rome", TenantCondition: authv1beta1.TenantCordoned}},
	).Build()
	cases := []struct {
		name string
		list func(context.Context, client.Client) ([]cobra.Completion, error)
		want []cobra.Completion
	}{
		{"namespaces", namespaces, []cobra.Completion{"default", "liqo-demo"}},
		{"offloaded namespaces", offloadedNamespaces, []cobra.Completion{"liqo-demo"}},
		{"peers", peers, []cobra.Completion{"milan\tProvider", "paris\tConsumerAndProvider"}},
		{"consumers", consumers, []cobra.Completion{"rome\tCordoned"}},
	}
	for _, tc := range cases {
		got, err := tc.list(t.Context(), c)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	all, _ := peers(t.Context(), c)
	if got := filter(all, []string{"milan"}, ""); !slices.Equal(got, []cobra.Completion{"paris\tConsumerAndProvider"}) {
		t.Errorf("info peer milan <Tab>: %q, want paris only", got)
	}
	all, _ = peers(t.Context(), c)
	if got := filter(all, nil, "m"); !slices.Equal(got, []cobra.Completion{"milan\tProvider"}) {
		t.Errorf("info peer m<Tab>: %q, want milan only", got)
	}
}
