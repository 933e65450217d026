package peeringuser

import (
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	pu "github.com/liqo-go/liqo/pkg/peeringuser"
)

// PolicyName names the ValidatingAdmissionPolicy and its binding that
// limit what peering users may write beyond what RBAC can say.
const PolicyName = "liqo-peering-users"

// PolicyMessage starts every refusal of the policy (pkg/peeringuser's,
// which the consumer's Claim recognises).
const PolicyMessage = pu.PolicyMessage

// clusterIDPattern is consts.ValidateClusterID as a regular expression: a
// DNS label short enough for its tenant namespace name.
var clusterIDPattern = fmt.Sprintf(`^[a-z0-9]([-a-z0-9]{0,%d}[a-z0-9])?$`, 63-len(consts.TenantNamespace(""))-2)

// Policy returns the ValidatingAdmissionPolicy and its binding. Every
// claim ConfigMap in namespace (the Liqo namespace) is a parameter; a rule
// applies to a request only when it comes from that parameter's user, so
// the results, ANDed over the parameters, constrain each user by its own
// claim. The policy only sees the requests of peering users.
//
// The binding allows what no parameter is found for, and liqoctl never
// deletes it. Both because kube-apiserver resolves the parameters before
// it evaluates matchConditions: with Deny, a binding whose parameter is
// missing (a user being deleted, seen by the admission caches a moment
// apart) would refuse every namespace creation in the cluster, whoever
// asks. And because kube-apiserver stops, for good, the informer of a core
// parameter kind (here ConfigMap) once no binding uses it, and would then
// not see the claims of users made afterwards (kubernetes/kubernetes#130887,
// #133827). So the policy fails open if its parameters are lost: Ensure
// checks, as the user, that it is enforced before handing out a token, and
// a generic user drops its namespace and binding rights as soon as it has
// set itself up.
//
// What it says, that RBAC cannot:
//   - a claim is set once, to a valid cluster ID, and nothing else of the
//     ConfigMap changes (its label makes it a parameter);
//   - a namespace may be created only as the claimed consumer's tenant
//     namespace, with the tenant labels and the user's label;
//   - a RoleBinding may be created only in that namespace, when the user
//     created it (its label), binding the user's ClusterRole to itself;
//   - a Tenant is created Active for the claimed consumer, its
//     administrative state is never changed, and a Tenant that is not
//     Active is not deleted: cordon and drain are the provider's decision;
//   - the nonce Secret is created empty and its data, labels and
//     annotations never written: the nonce is the provider's to issue,
//     and so are its issue time and the validity of the one it replaced
//     (annotations its controller keeps), which a user could otherwise
//     push into the future to keep a nonce valid for good;
//   - the network fabric's Configuration, GatewayServer and PublicKey are
//     created one each, named after the claimed consumer (fabricLimit).
func Policy(namespace string) (*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding) {
	labels := map[string]string{consts.PartOfLabel: consts.PartOfValue}
	rule := func(group string, resource string, ops ...admissionv1.OperationType) admissionv1.NamedRuleWithOperations {
		return admissionv1.NamedRuleWithOperations{RuleWithOperations: admissionv1.RuleWithOperations{
			Operations: ops,
			Rule:       admissionv1.Rule{APIGroups: []string{group}, APIVersions: []string{"*"}, Resources: []string{resource}},
		}}
	}
	forbidden := metav1.StatusReasonForbidden
	check := func(resource, expr, msg string) admissionv1.Validation {
		return admissionv1.Validation{
			Expression: fmt.Sprintf("!variables.owner || request.resource.resource != '%s' || (%s)", resource, oneLine(expr)),
			Message:    PolicyMessage + msg, Reason: &forbidden,
		}
	}
	has := func(m, k string) string { return fmt.Sprintf("(has(%s) && '%s' in %s)", m, k, m) }
	// same says that a field of a map type is unchanged by an update.
	same := func(f string) string {
		return fmt.Sprintf("((!has(object.%[1]s) && !has(oldObject.%[1]s)) || (has(object.%[1]s) && has(oldObject.%[1]s) && object.%[1]s == oldObject.%[1]s))", f)
	}
	is := func(m, k, v string) string { return fmt.Sprintf("(%s && %s['%s'] == %s)", has(m, k), m, k, v) }
	oldClaim := fmt.Sprintf("(%s ? oldObject.data['%s'] : '')", has("oldObject.data", ClaimKey), ClaimKey)
	condition := func(o string) string {
		return fmt.Sprintf("(has(%s.spec.tenantCondition) ? %s.spec.tenantCondition : '')", o, o)
	}
	active := string(authv1beta1.TenantActive)

	policy := &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: PolicyName, Labels: labels},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			ParamKind:     &admissionv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: append([]admissionv1.NamedRuleWithOperations{
				rule("", "namespaces", admissionv1.Create),
				rule("", "configmaps", admissionv1.Update),
				rule("", "secrets", admissionv1.Create, admissionv1.Update),
				rule("rbac.authorization.k8s.io", "rolebindings", admissionv1.Create),
				rule(authv1beta1.GroupVersion.Group, "tenants", admissionv1.Create, admissionv1.Update, admissionv1.Delete),
			}, fabricRules()...)},
			// Cheap: other users' requests skip the policy.
			MatchConditions: []admissionv1.MatchCondition{{Name: "peering-users",
				Expression: fmt.Sprintf("request.userInfo.username.startsWith('system:serviceaccount:') && request.userInfo.username.contains(':%s')", pu.Name(""))}},
			Variables: []admissionv1.Variable{
				{Name: "owner", Expression: "request.userInfo.username == 'system:serviceaccount:' + params.metadata.namespace + ':' + params.metadata.name"},
				{Name: "claim", Expression: fmt.Sprintf("%s ? params.data['%s'] : ''", has("params.data", ClaimKey), ClaimKey)},
				{Name: "user", Expression: fmt.Sprintf("params.metadata.labels['%s']", Label)},
			},
			Validations: []admissionv1.Validation{
				check("configmaps", fmt.Sprintf(`object.metadata.namespace == params.metadata.namespace && object.metadata.name == params.metadata.name
					&& %s == '' && has(object.data) && size(object.data) == 1 && %s && object.data['%s'].matches('%s')
					&& has(object.metadata.labels) && has(oldObject.metadata.labels) && object.metadata.labels == oldObject.metadata.labels`,
					oldClaim, has("object.data", ClaimKey), ClaimKey, clusterIDPattern),
					"the claim is set once, to a cluster ID, and nothing else changes"),
				check("namespaces", fmt.Sprintf(`variables.claim != '' && object.metadata.name == '%s' + variables.claim
					&& %s && %s && %s`,
					consts.TenantNamespace(""),
					is("object.metadata.labels", Label, "variables.user"),
					is("object.metadata.labels", consts.TenantNamespaceLabel, "'true'"),
					is("object.metadata.labels", consts.RemoteClusterIDLabel, "variables.claim")),
					"only the tenant namespace of the claimed cluster may be created, with the tenant and peering-user labels"),
				check("rolebindings", fmt.Sprintf(`variables.claim != '' && request.namespace == '%s' + variables.claim
					&& %s
					&& object.roleRef.kind == 'ClusterRole' && object.roleRef.name == params.metadata.name
					&& size(object.subjects) == 1 && object.subjects[0].kind == 'ServiceAccount'
					&& object.subjects[0].name == params.metadata.name
					&& has(object.subjects[0].namespace) && object.subjects[0].namespace == params.metadata.namespace`,
					consts.TenantNamespace(""), is("namespaceObject.metadata.labels", Label, "variables.user")),
					"only the user's own ClusterRole, bound to itself, in the tenant namespace it created"),
				check("tenants", fmt.Sprintf(`request.operation == 'DELETE' ? %s in ['', '%s'] :
					request.operation == 'CREATE' ? %s in ['', '%s'] && object.spec.clusterID == variables.claim :
					%s == %s`,
					condition("oldObject"), active, condition("object"), active, condition("object"), condition("oldObject")),
					"a Tenant is created Active for the claimed cluster, and its state (spec.tenantCondition) is the provider's to change: a Tenant that is not Active cannot be changed back or deleted by the consumer"),
				check("secrets", fmt.Sprintf(`request.operation == 'CREATE' ?
					object.metadata.name == '%s' && (!has(object.data) || size(object.data) == 0) :
					%s && %s && %s`,
					consts.NonceSecret, same("data"), same("metadata.labels"), same("metadata.annotations")),
					"only the nonce Secret may be created, and without data; its data, labels and annotations are never written: "+
						"the nonce, when it was issued and how long the one it replaced stays valid are the provider's to say"),
				fabricLimit(),
			},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: PolicyName, Labels: labels},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName: PolicyName,
			ParamRef: &admissionv1.ParamRef{
				Namespace: namespace,
				Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: Label, Operator: metav1.LabelSelectorOpExists}}},
				ParameterNotFoundAction: ptr.To(admissionv1.AllowAction),
			},
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
		},
	}
	return policy, binding
}

// oneLine joins a multi-line expression, for readable error messages.
func oneLine(expr string) string { return strings.Join(strings.Fields(expr), " ") }
