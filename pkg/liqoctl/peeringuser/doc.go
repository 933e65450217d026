// Package peeringuser implements the provider's side of peering for
// administrators who only touch their own cluster: liqoctl generate
// peering-user, generate peer-command and delete peering-user. The
// consumer's side (the token, the check of the server, the claim) is
// pkg/peeringuser, which the consumer's controller manager runs for liqoctl
// peer out-of-band.
//
// A peering user is a ServiceAccount liqo-peer-<user> in the provider's
// Liqo namespace with a long-lived token (a kubernetes.io/service-account-token
// Secret: it lives until deleted), holding only what liqoctl peer and
// unpeer do on the provider for one consumer:
//
//   - in the Liqo namespace (Role liqo-peer-<user>): get the cluster-ID
//     ConfigMap, the controller manager's Lease, the pod and external
//     Networks, the namespace itself, and its own claim ConfigMap;
//   - in the consumer's tenant namespace (ClusterRole liqo-peer-<user>,
//     bound there by a RoleBinding, so that it grants nothing elsewhere):
//     get that namespace, the nonce Secret, the Tenant, the ResourceSlices
//     (list, delete) and the network fabric's objects.
//
// Its claim ConfigMap (also liqo-peer-<user>) records the consumer's cluster
// ID. With --consumer-cluster-id it is set at creation, the tenant namespace
// is created and the RoleBinding made by liqoctl: the user creates no
// namespace and no binding. Without it (the manual's "liqoctl generate
// peer-command" with no flag) the user is generic: it may set its claim
// once, then create exactly the tenant namespace of the cluster it claimed
// and bind its ClusterRole there, and nothing else. RBAC cannot say "one
// namespace whose name is not known yet", so the ValidatingAdmissionPolicy
// liqo-peering-users (Policy) says it, with every claim ConfigMap as a
// parameter; it also keeps every peering user, bound or generic, from
// changing its Tenant's administrative state (a cordoned consumer cannot
// lift the cordon) and from writing the nonce itself. The policy allows
// what it finds no claim for (see Policy), so Ensure checks, as the user,
// that the API server enforces it before handing out a token.
//
// The out-of-band token (pkg/peeringuser.Token) carries the provider's CA
// next to the ServiceAccount token.
package peeringuser
