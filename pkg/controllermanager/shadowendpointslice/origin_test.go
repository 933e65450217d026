package shadowendpointslice

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

func TestOriginMismatchCases(t *testing.T) {
	twin := map[string]string{consts.TwinNamespaceLabel: "true", consts.RemoteClusterIDLabel: "rome"}
	cases := []struct {
		name     string
		nsLabels map[string]string
		origin   string
		// want is a piece of the explanation; "" when the origin matches.
		want string
	}{
		{"the twin's consumer", twin, "rome", ""},
		{"another consumer", twin, "naples", `comes from cluster "naples"`},
		{"no origin label", twin, "", "has no liqo.io/origin-cluster-id label"},
		{"a tenant namespace", map[string]string{consts.TenantNamespaceLabel: "true", consts.RemoteClusterIDLabel: "rome"}, "rome", "no consumer's twin namespace"},
		{"a plain namespace", nil, "rome", "no consumer's twin namespace"},
		{"a twin of no consumer", map[string]string{consts.TwinNamespaceLabel: "true"}, "", "no consumer's twin namespace"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ses := &offv1beta1.ShadowEndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}}
			if tc.origin != "" {
				ses.Labels = map[string]string{consts.OriginClusterIDLabel: tc.origin}
			}
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Labels: tc.nsLabels}}
			got := originMismatch(ses, ns)
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
