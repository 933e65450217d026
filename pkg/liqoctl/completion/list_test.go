package completion

import (
	"context"
	"slices"
	"testing"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/liqo-go/liqo/apis"
	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
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
		&authv1beta1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "liqo-tenant-rome", Name: "pool",
			Labels: map[string]string{consts.ReplicationLabel: "true"}}, Spec: authv1beta1.ResourceSliceSpec{ConsumerClusterID: ptr.To(corev1beta1.ClusterID("rome"))}},
		&offv1beta1.Quota{ObjectMeta: metav1.ObjectMeta{Namespace: "liqo-tenant-rome", Name: "pool"}, Spec: offv1beta1.QuotaSpec{Cordoned: ptr.To(true)}},
		&authv1beta1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "liqo-tenant-lyon", Name: "gpus",
			Labels: map[string]string{consts.ReplicationLabel: "true"}}, Spec: authv1beta1.ResourceSliceSpec{ConsumerClusterID: ptr.To(corev1beta1.ClusterID("lyon"))}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "liqo-demo", Name: "hello"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "liqo-demo", Name: "elsewhere"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kubernetes"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP}},
		&mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: "liqo-demo", Name: "hello"}},
		// The local cluster's own slice, as a consumer: not a provider's to cordon.
		&authv1beta1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "liqo-tenant-milan", Name: "mine"}},
	).Build()
	cases := []struct {
		name string
		list func(context.Context, client.Client) ([]cobra.Completion, error)
		want []cobra.Completion
	}{
		{"namespaces", namespaces, []cobra.Completion{"default", "liqo-demo"}},
		{"offloaded namespaces", offloadedNamespaces, []cobra.Completion{"liqo-demo"}},
		{"exportable Services", func(ctx context.Context, c client.Client) ([]cobra.Completion, error) {
			return services(ctx, c, "liqo-demo")
		}, []cobra.Completion{"hello\tClusterIP"}},
		{"exported Services", func(ctx context.Context, c client.Client) ([]cobra.Completion, error) {
			return exportedServices(ctx, c, "liqo-demo")
		}, []cobra.Completion{"hello"}},
		{"peers", peers, []cobra.Completion{"milan\tProvider", "paris\tConsumerAndProvider"}},
		{"consumers", consumers, []cobra.Completion{"rome\tCordoned"}},
		{"consumers' slices", func(ctx context.Context, c client.Client) ([]cobra.Completion, error) {
			return consumerSlices(ctx, c, "")
		},
			[]cobra.Completion{"gpus\tconsumer lyon", "pool\tconsumer rome, cordoned"}},
		{"one consumer's slices", func(ctx context.Context, c client.Client) ([]cobra.Completion, error) {
			return consumerSlices(ctx, c, "rome")
		},
			[]cobra.Completion{"pool\tconsumer rome, cordoned"}},
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
