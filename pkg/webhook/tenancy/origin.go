package tenancy

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/liqo-go/liqo/pkg/consts"
)

// ConsumerOf returns the consumer a ShadowPod belongs to by its namespace:
// the consumer the namespace is a twin of, "" if it is no twin namespace.
func ConsumerOf(ns *corev1.Namespace) string {
	if ns.Labels[consts.TwinNamespaceLabel] != "true" || ns.Labels[consts.ManagedByLabel] != consts.ManagedByValue {
		return ""
	}
	return ns.Labels[consts.RemoteClusterIDLabel]
}

// requester tells which consumer made a request: its cluster ID and true
// for a consumer's control plane, false for anyone else (administrators,
// the provider's own controllers). Consumers authenticate with the user
// name consts.ConsumerUser(id) in the group consts.ConsumerGroup; one
// without the other is refused rather than guessed at.
func Requester(u authnv1.UserInfo) (string, bool, error) {
	id, named := strings.CutPrefix(u.Username, consts.ConsumerUser(""))
	grouped := slices.Contains(u.Groups, consts.ConsumerGroup)
	switch {
	case named && grouped:
		if err := consts.ValidateClusterID(id); err != nil {
			return "", false, fmt.Errorf("user %s is no valid consumer: %w", u.Username, err)
		}
		return id, true, nil
	case grouped:
		return "", false, fmt.Errorf("user %s is in group %s but is not named %s<cluster id>: not a consumer identity this cluster issued",
			u.Username, consts.ConsumerGroup, consts.ConsumerUser(""))
	case named:
		return "", false, fmt.Errorf("user %s is named like a consumer but is not in group %s: not a consumer identity this cluster issued",
			u.Username, consts.ConsumerGroup)
	}
	return "", false, nil
}

// CheckOrigin tells whether a ShadowPod may live in a namespace: it must be
// a twin namespace (twinOf names its consumer), a consumer may only write in
// its own, and the ShadowPod's origin label must name that consumer, as the
// provider's accounting of it does.
func CheckOrigin(namespace, twinOf, requester string, isConsumer bool, origin string) error {
	if twinOf == "" {
		return fmt.Errorf("namespace %s is not a twin namespace of any consumer (label %s): ShadowPods run only in the namespaces created for consumers",
			namespace, consts.TwinNamespaceLabel)
	}
	if isConsumer && requester != twinOf {
		return fmt.Errorf("consumer %s may not write ShadowPods in namespace %s, which belongs to consumer %s", requester, namespace, twinOf)
	}
	if origin != twinOf {
		return fmt.Errorf("label %s must be %q, the consumer namespace %s belongs to; got %q",
			consts.OriginClusterIDLabel, twinOf, namespace, origin)
	}
	return nil
}

// ConsumerWrite is who makes req, for a handler judging consumers' writes
// of kinds only: the consumer and the kind, or the answer to give at once
// (allowed for anyone but a consumer; refused for a half consumer
// identity; an error for a kind the handler, named webhook, does not
// judge).
func ConsumerWrite(req admission.Request, webhook string, kinds ...schema.GroupResource) (string, schema.GroupResource, *admission.Response) {
	id, isConsumer, err := Requester(req.UserInfo)
	if err != nil {
		resp := admission.Denied(err.Error())
		return "", schema.GroupResource{}, &resp
	}
	if !isConsumer {
		resp := admission.Allowed("")
		return "", schema.GroupResource{}, &resp
	}
	gr := schema.GroupResource{Group: req.Resource.Group, Resource: req.Resource.Resource}
	if !slices.Contains(kinds, gr) {
		resp := admission.Errored(http.StatusBadRequest, fmt.Errorf("the %s webhook does not judge %s", webhook, gr))
		return "", gr, &resp
	}
	return id, gr, nil
}
