// Package offloading extends namespaces to remote clusters: it decides, for
// each NamespaceOffloading, which peered clusters get a twin namespace and
// under which name, and summarises how the twins are doing.
package offloading

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
)

// Reasons users can act on, in the per-cluster conditions.
const (
	ReasonNameTooLong     = "RemoteNameTooLong"
	ReasonInvalidName     = "InvalidRemoteName"
	ReasonInvalidSelector = "InvalidClusterSelector"
	ReasonNotSelected     = "ClusterNotSelected"
	ReasonAlreadyExists   = "RemoteNamespaceAlreadyExists"
	ReasonCreated         = "RemoteNamespaceCreated"
	ReasonPending         = "RemoteNamespacePending"
	ReasonReserved        = "NamespaceReserved"
)

// RemoteName is the twin namespace's name under the mapping strategy. Its
// error says why the name cannot be used, for the user to pick another
// strategy or name.
func RemoteName(spec *offv1beta1.NamespaceOffloadingSpec, namespace, localClusterID string) (string, string, error) {
	name := namespace + "-" + localClusterID
	switch spec.NamespaceMappingStrategy {
	case offv1beta1.EnforceSameNameMappingStrategy:
		name = namespace
	case offv1beta1.SelectedNameMappingStrategy:
		name = spec.RemoteNamespaceName
	}
	if len(name) > validation.DNS1123LabelMaxLength {
		return name, ReasonNameTooLong, fmt.Errorf("the remote namespace name %q has %d characters, more than the %d allowed; use a shorter namespace, EnforceSameName or SelectedName",
			name, len(name), validation.DNS1123LabelMaxLength)
	}
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return name, ReasonInvalidName, fmt.Errorf("the remote namespace name %q is not valid: %v", name, errs)
	}
	return name, "", nil
}
