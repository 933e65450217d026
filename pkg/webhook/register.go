package webhook

import (
	"fmt"
	"net"
	"strconv"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/webhook/tenancy"
)

// Names of the webhook configurations and of the webhooks in them. Each
// cluster runs one controller manager, so fixed names are enough; the
// webhook names are those in the errors users see (seed: `admission webhook
// "shadowpod.validate.liqo.io" denied the request: failed getting quota`).
const (
	MutatingConfigurationName   = "liqo-mutation"
	ValidatingConfigurationName = "liqo-validation"
	PodWebhookName              = "pod.mutate.liqo.io"
	DaemonSetWebhookName        = "daemonset.mutate.liqo.io"
	ShadowPodWebhookName        = "shadowpod.validate.liqo.io"
	ReflectedWebhookName        = "reflected.validate.liqo.io"
	ReplicaWebhookName          = "replica.validate.liqo.io"
	EventWebhookName            = "event.validate.liqo.io"

	podPath       = "/mutate/pod"
	daemonSetPath = "/mutate/daemonset"
	shadowPodPath = "/validate/shadowpod"
	reflectedPath = "/validate/reflected"
	replicaPath   = "/validate/replica"
	eventPath     = "/validate/event"
	// timeoutSeconds bounds how long the API server waits on us: the
	// handlers read caches, and a stuck webhook must not stall writes.
	timeoutSeconds = 5
)

// configurations are the webhook configurations pointing the API server at
// base (https://host:port) and trusting caBundle.
func configurations(base string, caBundle []byte) (*admissionv1.MutatingWebhookConfiguration, *admissionv1.ValidatingWebhookConfiguration) {
	return configurationsCalling(func(path string) admissionv1.WebhookClientConfig {
		return admissionv1.WebhookClientConfig{URL: ptr.To(base + path), CABundle: caBundle}
	})
}

// ServiceConfigurations are the webhook configurations the chart installs:
// calling the server through svc, without a caBundle, which the manager
// keeps (certPublisher).
func ServiceConfigurations(svc ServiceRef) (*admissionv1.MutatingWebhookConfiguration, *admissionv1.ValidatingWebhookConfiguration) {
	return configurationsCalling(func(path string) admissionv1.WebhookClientConfig {
		return admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{
			Namespace: svc.Namespace, Name: svc.Name, Path: ptr.To(path), Port: ptr.To[int32](ServicePort)}}
	})
}

// ServicePort is the webhook Service's port.
const ServicePort = 443

// configurationsCalling are the webhook configurations, each webhook
// calling the server as at says for its path.
func configurationsCalling(at func(path string) admissionv1.WebhookClientConfig) (*admissionv1.MutatingWebhookConfiguration, *admissionv1.ValidatingWebhookConfiguration) {
	labels := map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.PartOfLabel: consts.PartOfValue}
	fail := ptr.To(admissionv1.Fail)
	none := ptr.To(admissionv1.SideEffectClassNone)
	namespaced := ptr.To(admissionv1.NamespacedScope)

	mutating := &admissionv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: MutatingConfigurationName, Labels: labels},
		Webhooks: []admissionv1.MutatingWebhook{{
			Name:         PodWebhookName,
			ClientConfig: at(podPath),
			Rules: []admissionv1.RuleWithOperations{{
				Operations: []admissionv1.OperationType{admissionv1.Create},
				Rule: admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"},
					Scope: namespaced},
			}},
			// Only the namespaces offloading selected: a pod anywhere else
			// never waits on us, and never fails because we are down.
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{consts.SchedulingEnabledLabel: "true"}},
			FailurePolicy:     fail,
			SideEffects:       none,
			TimeoutSeconds:    ptr.To[int32](timeoutSeconds),
			// Our patch only adds tolerations and node affinity, which no
			// other webhook's decision depends on.
			ReinvocationPolicy:      ptr.To(admissionv1.NeverReinvocationPolicy),
			AdmissionReviewVersions: []string{"v1"},
		}, daemonSetWebhook(at(daemonSetPath))},
	}
	validating := &admissionv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: ValidatingConfigurationName, Labels: labels},
		Webhooks: []admissionv1.ValidatingWebhook{{
			Name:         ShadowPodWebhookName,
			ClientConfig: at(shadowPodPath),
			Rules: []admissionv1.RuleWithOperations{{
				Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
				Rule: admissionv1.Rule{APIGroups: []string{offv1beta1.GroupVersion.Group}, APIVersions: []string{offv1beta1.GroupVersion.Version},
					Resources: []string{"shadowpods"}, Scope: namespaced},
			}},
			FailurePolicy:           fail,
			SideEffects:             none,
			TimeoutSeconds:          ptr.To[int32](timeoutSeconds),
			AdmissionReviewVersions: []string{"v1"},
		}, reflectedWebhook(at(reflectedPath)), replicaWebhook(at(replicaPath)), eventWebhook(at(eventPath))},
	}
	return mutating, validating
}

// daemonSetWebhook sends the API server to daemonSetMutator for every
// DaemonSet created or changed, in every namespace: it keeps their pods off
// virtual nodes. It fails open: while we are down, DaemonSets are written
// unchanged (the cluster's own, kube-system's included, must never wait on
// us), and a pod of theirs that reaches a virtual node is refused there.
func daemonSetWebhook(at admissionv1.WebhookClientConfig) admissionv1.MutatingWebhook {
	return admissionv1.MutatingWebhook{
		Name:         DaemonSetWebhookName,
		ClientConfig: at,
		Rules: []admissionv1.RuleWithOperations{{
			Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
			Rule: admissionv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"daemonsets"},
				Scope: ptr.To(admissionv1.NamespacedScope)},
		}},
		FailurePolicy:           ptr.To(admissionv1.Ignore),
		SideEffects:             ptr.To(admissionv1.SideEffectClassNone),
		TimeoutSeconds:          ptr.To[int32](timeoutSeconds),
		ReinvocationPolicy:      ptr.To(admissionv1.NeverReinvocationPolicy),
		AdmissionReviewVersions: []string{"v1"},
	}
}

// reflectedWebhook sends the API server to reflectedValidator for the
// objects besides ShadowPods consumers write in their twin namespaces. No
// namespace selector: a consumer's write anywhere reaches the validator,
// which refuses it outside the consumer's own twins, so a grant made by
// mistake elsewhere, or a twin that lost its labels, cannot skip the
// check (and the budget.ObjectBudget). The match condition leaves out everyone
// but consumer identities (named or grouped as one, so that a half
// identity reaches the webhook and is refused there), so the provider's
// own writes, in twins and everywhere else, never wait on us and do not
// fail while we are down; a consumer's fail.
func reflectedWebhook(at admissionv1.WebhookClientConfig) admissionv1.ValidatingWebhook {
	return consumerWebhook(ReflectedWebhookName, at, []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
		tenancy.ServicesResource, tenancy.SecretsResource, tenancy.ConfigMapsResource, tenancy.PVCsResource, tenancy.IngressesResource, tenancy.ShadowEndpointSlicesResource)
}

// replicaWebhook sends the API server to replicaValidator for the
// NamespaceMaps, ResourceSlices and ExportRecords consumers write, create,
// change or delete. No namespace selector: the validator checks the namespace itself,
// so a tenant namespace missing a label cannot skip it. The match condition
// leaves out everyone but consumer identities, as reflectedWebhook's does,
// so this cluster's own controllers never wait on us; every version of the
// kinds is matched, so no future one bypasses the check.
func replicaWebhook(at admissionv1.WebhookClientConfig) admissionv1.ValidatingWebhook {
	return consumerWebhook(ReplicaWebhookName, at, []admissionv1.OperationType{admissionv1.Create, admissionv1.Update, admissionv1.Delete},
		tenancy.NamespaceMapsResource, tenancy.ResourceSlicesResource, tenancy.ExportRecordsResource)
}

// eventWebhook sends the API server to eventValidator for the Events
// consumers record, in both API groups. Every Event of the cluster
// matches the rules; the match condition, evaluated by the API server,
// sends only consumers' on, so this cluster's own Events never wait on us.
func eventWebhook(at admissionv1.WebhookClientConfig) admissionv1.ValidatingWebhook {
	return consumerWebhook(EventWebhookName, at, []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
		tenancy.EventsResource, tenancy.EventsV1Resource)
}

// consumerWebhook is a webhook judging the writes ops of consumer
// identities only (consumersOnly) to kinds, in every namespace and every
// version of the kinds (so that no other one bypasses the check), failing
// closed.
func consumerWebhook(name string, at admissionv1.WebhookClientConfig, ops []admissionv1.OperationType,
	kinds ...schema.GroupResource) admissionv1.ValidatingWebhook {
	rules := make([]admissionv1.RuleWithOperations, 0, len(kinds))
	for _, gr := range kinds {
		rules = append(rules, admissionv1.RuleWithOperations{Operations: ops,
			Rule: admissionv1.Rule{APIGroups: []string{gr.Group}, APIVersions: []string{"*"}, Resources: []string{gr.Resource},
				Scope: ptr.To(admissionv1.NamespacedScope)}})
	}
	return admissionv1.ValidatingWebhook{
		Name:                    name,
		ClientConfig:            at,
		Rules:                   rules,
		MatchConditions:         consumersOnly(),
		FailurePolicy:           ptr.To(admissionv1.Fail),
		SideEffects:             ptr.To(admissionv1.SideEffectClassNone),
		TimeoutSeconds:          ptr.To[int32](timeoutSeconds),
		AdmissionReviewVersions: []string{"v1"},
	}
}

// baseURL is the https URL of the server at host and port.
func baseURL(host string, port int) string {
	return "https://" + net.JoinHostPort(host, strconv.Itoa(port))
}

// consumersOnly is the match condition of the webhooks that judge only
// consumer identities, so that this cluster's own controllers never wait on
// them.
func consumersOnly() []admissionv1.MatchCondition {
	return []admissionv1.MatchCondition{{Name: "consumers-only",
		Expression: fmt.Sprintf("request.userInfo.username.startsWith(%q) || %q in request.userInfo.groups",
			consts.ConsumerUser(""), consts.ConsumerGroup)}}
}
