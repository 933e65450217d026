package offloading

import (
	"fmt"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/liqo-go/liqo/pkg/consts"
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
// if it may. A consumer's own names are "<anything>-<its id>", the
// DefaultName strategy's; any other needs the provider's allow-list. A name
// that ends in "-<id>" for a longer id of another tenant (consumer b asking
// for "x-a-b" while a-b is a tenant) is that tenant's, allow-list or not,
// so that no consumer takes another's default names first. tenants are the
// cluster ids of this cluster's tenant namespaces.
func (o TwinOptions) refuseName(consumer, remote string, tenants []string) (reason, message string) {
	if errs := validation.IsDNS1123Label(remote); len(errs) > 0 {
		return ReasonInvalidName, fmt.Sprintf("namespace name %q is not a DNS label: %s", remote, strings.Join(errs, "; "))
	}
	if reason, message := reservedName(remote); reason != "" {
		return reason, message
	}
	switch owner := nameOwner(remote, append([]string{consumer}, tenants...)); owner {
	case consumer:
		return "", ""
	case "":
	default:
		return ReasonNotAllowed, fmt.Sprintf("namespace name %q ends in -%s: it is a twin name of cluster %s, not of %s, whose twin names end in -%s",
			remote, owner, owner, consumer, consumer)
	}
	if o.allowed(remote) {
		return "", ""
	}
	return ReasonNotAllowed, fmt.Sprintf("namespace name %q does not end in -%s (the DefaultName strategy's <namespace>-%s) and the provider's --allowed-twin-namespaces does not list it: "+
		"offload with the DefaultName strategy, or ask the provider's administrators to allow the name", remote, consumer, consumer)
}

// reservedName refuses the names of tenant namespaces: a twin there would
// be mistaken for the tenant namespace of a cluster that peers later.
func reservedName(remote string) (reason, message string) {
	if _, ok := consts.ClusterIDOfTenantNamespace(remote); ok {
		return ReasonNotAllowed, fmt.Sprintf("namespace name %q has the prefix of this cluster's tenant namespaces, which no twin may take", remote)
	}
	return "", ""
}

// nameOwner is the longest id such that remote is "<something>-<id>".
func nameOwner(remote string, ids []string) string {
	owner := ""
	for _, id := range ids {
		if len(id) > len(owner) && len(remote) > len(id)+1 && strings.HasSuffix(remote, "-"+id) {
			owner = id
		}
	}
	return owner
}

// allowed tells whether the allow-list names remote.
func (o TwinOptions) allowed(remote string) bool {
	for _, p := range o.AllowedNames {
		// Validate refused bad patterns.
		if ok, _ := path.Match(p, remote); ok {
			return true
		}
	}
	return false
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
