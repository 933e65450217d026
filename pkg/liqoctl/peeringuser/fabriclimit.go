package peeringuser

import (
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
)

// fabricResources are the network fabric's kinds a peering user creates in
// its tenant namespace (liqoctl network connect, peer).
var fabricResources = []string{"configurations", "gatewayservers", publicKeys}

// fabricRules are the policy's match rules for the creations of
// fabricResources.
func fabricRules() []admissionv1.NamedRuleWithOperations {
	return []admissionv1.NamedRuleWithOperations{{RuleWithOperations: admissionv1.RuleWithOperations{
		Operations: []admissionv1.OperationType{admissionv1.Create},
		Rule:       admissionv1.Rule{APIGroups: []string{netv1beta1.GroupVersion.Group}, APIVersions: []string{"*"}, Resources: fabricResources},
	}}}
}

// fabricLimit bounds what a peering user makes of the fabric's kinds: one
// of each, named after the consumer it claimed, which is all the fabric
// needs for one peer. RBAC cannot limit creations by name, and each
// GatewayServer is a gateway pod and a Service the provider runs, each
// Configuration a set of CIDRs its IPAM remaps: unbounded, they would
// exhaust both.
func fabricLimit() admissionv1.Validation {
	quoted := make([]string, len(fabricResources))
	for i, r := range fabricResources {
		quoted[i] = "'" + r + "'"
	}
	forbidden := metav1.StatusReasonForbidden
	return admissionv1.Validation{
		Expression: fmt.Sprintf("!variables.owner || request.resource.group != '%s' || !(request.resource.resource in [%s]) || "+
			"(variables.claim != '' && object.metadata.name == variables.claim)",
			netv1beta1.GroupVersion.Group, strings.Join(quoted, ", ")),
		MessageExpression: fmt.Sprintf("'%s' + 'a peering user creates one Configuration, GatewayServer and PublicKey, named after the consumer it peers (' + "+
			"(variables.claim != '' ? variables.claim : 'none claimed yet') + '), not ' + object.metadata.name", PolicyMessage),
		Reason: &forbidden,
	}
}
