package offloading

import (
	"fmt"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/twinname"
)

// Reasons a provider gives in a NamespaceMap's status for a twin it does
// not create, besides ReasonAlreadyExists and ReasonInvalidName.
const (
	ReasonNotAllowed = "RemoteNameNotAllowed"
	ReasonTooMany    = "TooManyRemoteNamespaces"
)

// providerReasons are the reasons a consumer takes from its providers'
// answers; any other is reported as the reference's CreationLoopBackOff.
var providerReasons = map[string]bool{ReasonAlreadyExists: true, ReasonNotAllowed: true, ReasonTooMany: true, ReasonInvalidName: true}

// refuseName says why consumer may not have a twin named remote, or ""
// if it may: the rules are twinname's (never Kubernetes', Liqo's or the
// provider's reserved names, never another tenant's, the consumer's own
// "<anything>-<id>" or a name the allow-list lets through, any free one by
// default). tenants are the cluster ids of this cluster's tenant
// namespaces.
func (o TwinOptions) refuseName(consumer, remote string, tenants []string) (reason, message string) {
	r := o.rules().Check(consumer, remote, tenants)
	switch {
	case r == nil:
		return "", ""
	case r.Invalid:
		return ReasonInvalidName, r.Message
	default:
		return ReasonNotAllowed, r.Message
	}
}

func (o TwinOptions) rules() twinname.Rules {
	return twinname.Rules{Allowed: o.AllowedNames, Reserved: o.ReservedNames}
}

// reservedName refuses the names of tenant namespaces: a twin there would
// be mistaken for the tenant namespace of a cluster that peers later.
func reservedName(remote string) (reason, message string) {
	if _, ok := consts.ClusterIDOfTenantNamespace(remote); ok {
		return ReasonNotAllowed, fmt.Sprintf("namespace name %q has the prefix of this cluster's tenant namespaces, which no twin may take", remote)
	}
	return "", ""
}

// tooMany is the message of a twin over the cap.
func (o TwinOptions) tooMany(consumer, remote string) string {
	return fmt.Sprintf("cluster %s has %d twin namespaces here, the provider's --max-twin-namespaces-per-tenant: not creating %s; unoffload a namespace first",
		consumer, o.MaxPerTenant, remote)
}

// alreadyExists is the message of a twin whose name another namespace
// holds.
func alreadyExists(consumer, remote string) string {
	return fmt.Sprintf("namespace %s already exists on this cluster and was not created for %s", remote, consumer)
}
