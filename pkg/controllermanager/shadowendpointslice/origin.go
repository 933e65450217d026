package shadowendpointslice

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// originMismatch explains why ses, in namespace ns, must get no
// EndpointSlice; "" when it may have one.
//
// A ShadowEndpointSlice is acted on only in a twin namespace and only when
// its origin label names the consumer that twin namespace was made for.
// Consumers may write ShadowEndpointSlices in their own twin namespaces
// alone (RBAC sees to that), so one found elsewhere, or naming another
// cluster, was written by someone else: turning it into a slice would let
// it steer the provider's Service traffic under a consumer's name.
func originMismatch(ses *offv1beta1.ShadowEndpointSlice, ns *corev1.Namespace) string {
	origin := ses.Labels[consts.OriginClusterIDLabel]
	switch consumer := ns.Labels[consts.RemoteClusterIDLabel]; {
	case ns.Labels[consts.TwinNamespaceLabel] != "true" || consumer == "":
		return fmt.Sprintf("namespace %s is no consumer's twin namespace (labels %s=true and %s): no EndpointSlice is made here",
			ns.Name, consts.TwinNamespaceLabel, consts.RemoteClusterIDLabel)
	case origin == "":
		return fmt.Sprintf("the ShadowEndpointSlice has no %s label; namespace %s belongs to consumer %q",
			consts.OriginClusterIDLabel, ns.Name, consumer)
	case origin != consumer:
		return fmt.Sprintf("the ShadowEndpointSlice comes from cluster %q (label %s), but namespace %s belongs to consumer %q",
			origin, consts.OriginClusterIDLabel, ns.Name, consumer)
	}
	return ""
}
