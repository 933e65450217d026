package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// shadowPodValidator admits the ShadowPods a provider runs for its
// consumers: in the right namespace, asking nothing a consumer may not ask,
// within the consumer's quota.
// shadowPodsResource is the resource shadowPodValidator judges.
var shadowPodsResource = schema.GroupResource{Group: offv1beta1.GroupVersion.Group, Resource: "shadowpods"}

type shadowPodValidator struct {
	// reader is the manager's cache (namespaces, Quotas).
	reader client.Reader
	// api reads around the cache when it shows no Quota: one created an
	// instant ago may not be in the cache yet, and denying then would fail
	// pods that the next second would admit. It also reads the priority
	// and runtime classes a consumer's pod names (apiClasses).
	api     client.Reader
	ledger  *Ledger[types.NamespacedName]
	decoder admission.Decoder
	// policy is what consumers' pods may ask of this provider.
	policy PodPolicy
	// synced tells whether the ledger holds every stored ShadowPod.
	synced func() bool
	// budget holds consumers' ShadowPods, by size, to their ObjectBudget:
	// the Quota bounds their number, not what each stores.
	budget *budgetGuard
}

var _ admission.Handler = (*shadowPodValidator)(nil)

// Handle validates one ShadowPod create or update.
func (v *shadowPodValidator) Handle(ctx context.Context, req admission.Request) admission.Response {
	sp := &offv1beta1.ShadowPod{}
	if err := v.decoder.Decode(req, sp); err != nil {
		if bad := malformedQuantities(req.Object.Raw); len(bad) > 0 {
			return admission.Denied(strings.Join(bad, "; "))
		}
		return admission.Errored(http.StatusBadRequest, err)
	}
	var old *offv1beta1.ShadowPod
	if req.Operation == admissionv1.Update {
		old = &offv1beta1.ShadowPod{}
		if err := v.decoder.DecodeRaw(req.OldObject, old); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
	}
	id, isConsumer, err := requester(req.UserInfo)
	if err != nil {
		return admission.Denied(err.Error())
	}

	var ns corev1.Namespace
	if err := v.reader.Get(ctx, types.NamespacedName{Name: req.Namespace}, &ns); err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("reading namespace %s: %w", req.Namespace, err))
	}
	consumer := consumerOf(&ns)
	// Others than consumers (the garbage collector removing a finalizer,
	// an administrator relabelling) may update a ShadowPod without
	// proving its origin again.
	keepsOrigin := old != nil && !isConsumer && old.Labels[consts.OriginClusterIDLabel] == sp.Labels[consts.OriginClusterIDLabel]
	if !keepsOrigin {
		if err := checkOrigin(req.Namespace, consumer, id, isConsumer, sp.Labels[consts.OriginClusterIDLabel]); err != nil {
			return admission.Denied(err.Error())
		}
	}
	var bad []string
	if isConsumer {
		if bad, err = v.policy.Vet(ctx, req.Namespace, sp.Labels, sp.Annotations, &sp.Spec.Pod, apiClasses{v.api}); err != nil {
			return admission.Errored(http.StatusInternalServerError, err)
		}
	}
	if old == nil {
		// Anyone's: the API server would refuse the real pod anyway, after
		// the quota had counted it. An update keeps the resources (below).
		bad = append(bad, vetResources(&sp.Spec.Pod)...)
	}
	if len(bad) > 0 {
		return admission.Denied(strings.Join(bad, "; "))
	}

	if old != nil {
		if changes := resourceChanges(&old.Spec.Pod, &sp.Spec.Pod); len(changes) > 0 {
			return admission.Denied("the resources of a ShadowPod are immutable, as the real pod keeps those it was created with " +
				"(delete and recreate the ShadowPod to change them): " + strings.Join(changes, "; "))
		}
		// Nothing more is asked of the quota: cordoned or exceeded, it
		// must never block the updates that end a ShadowPod's life; nor
		// is of the budget, but for an update growing it.
		return v.admitSize(ctx, req, id, isConsumer, sp, old)
	}
	if consumer == "" {
		return admission.Denied(fmt.Sprintf("failed getting quota: namespace %s belongs to no consumer", req.Namespace))
	}
	limit, err := v.limit(ctx, consumer)
	if err != nil {
		return admission.Denied(err.Error())
	}
	if !limit.Open {
		return admission.Denied(cordonRefusal(consumer, limit.Cordoned))
	}
	why, err := tenantRefusal(ctx, v.reader, consumer)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	if why != "" {
		return admission.Denied(why)
	}
	if isConsumer {
		refusal, err := fitRefusal(ctx, v.reader, consumer, &sp.Spec.Pod)
		if err != nil {
			return admission.Errored(http.StatusInternalServerError, err)
		}
		if refusal != nil {
			return *refusal
		}
	}
	if resp := v.admitSize(ctx, req, id, isConsumer, sp, nil); !resp.Allowed {
		return resp
	}
	if err := waitSynced(ctx, v.synced, "the ShadowPods' usage"); err != nil {
		return admission.Errored(http.StatusServiceUnavailable, err)
	}
	key := types.NamespacedName{Namespace: req.Namespace, Name: sp.Name}
	usage := UsageOf(&sp.Spec.Pod)
	check := v.ledger.Reserve
	if req.DryRun != nil && *req.DryRun {
		// Answered as the real request would be, but nothing will be
		// stored: a reservation would hold quota for its whole TTL, and a
		// forged dry run would block the real pods behind it.
		check = v.ledger.Check
	}
	if err := check(consumer, key, usage, limit); err != nil {
		var exceeded *ExceededError
		if errors.As(err, &exceeded) {
			if len(limit.Cordoned) > 0 {
				// The consumer would otherwise see a quota it has room in.
				return admission.Denied(fmt.Sprintf("%v (consumer %s; the grant of its cordoned ResourceSlices %s is not counted)",
					err, consumer, strings.Join(limit.Cordoned, ", ")))
			}
			return admission.Denied(fmt.Sprintf("%v (consumer %s)", err, consumer))
		}
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.Allowed("")
}

// limit merges the consumer's Quotas in its tenant namespace.
func (v *shadowPodValidator) limit(ctx context.Context, consumer string) (Limit, error) {
	tenant := consts.TenantNamespace(consumer)
	var list offv1beta1.QuotaList
	if err := v.reader.List(ctx, &list, client.InNamespace(tenant)); err != nil {
		return Limit{}, fmt.Errorf("failed getting quota: listing the Quotas in %s: %w", tenant, err)
	}
	list.Items = ownQuotas(list.Items, consumer)
	if len(list.Items) == 0 && v.api != nil {
		if err := v.api.List(ctx, &list, client.InNamespace(tenant)); err != nil {
			return Limit{}, fmt.Errorf("failed getting quota: listing the Quotas in %s: %w", tenant, err)
		}
		list.Items = ownQuotas(list.Items, consumer)
	}
	if len(list.Items) == 0 {
		return Limit{}, fmt.Errorf("failed getting quota: no Quota for consumer %s in namespace %s "+
			"(it is created once the consumer's ResourceSlice is accepted: is the peering established?)", consumer, tenant)
	}
	return LimitOf(list.Items), nil
}

// cordonRefusal says why consumer may not start a new ShadowPod when every
// Quota it has is cordoned (liqoctl cordon resourceslice), naming the
// slices and how the provider lifts the cordon.
func cordonRefusal(consumer string, cordoned []string) string {
	what := "ResourceSlice " + cordoned[0] + " of consumer " + consumer + " is cordoned on this provider (its Quota's spec.cordoned)"
	if len(cordoned) > 1 {
		what = "ResourceSlices " + strings.Join(cordoned, ", ") + " of consumer " + consumer + " are cordoned on this provider (their Quotas' spec.cordoned)"
	}
	return fmt.Sprintf("the %s: new ShadowPods are refused, "+
		"running ones keep running, until the provider's administrator runs liqoctl uncordon resourceslice %s --remote-cluster-id %s",
		what, cordoned[0], consumer)
}

// ownQuotas keeps the Quotas bounding consumer.
func ownQuotas(quotas []offv1beta1.Quota, consumer string) []offv1beta1.Quota {
	out := quotas[:0]
	for _, q := range quotas {
		if q.Spec.User == consts.ConsumerUser(consumer) {
			out = append(out, q)
		}
	}
	return out
}

// admitSize holds a consumer's ShadowPod sp (old before an update) to its
// ObjectBudget's bytes.
func (v *shadowPodValidator) admitSize(ctx context.Context, req admission.Request, consumer string, isConsumer bool,
	sp, old *offv1beta1.ShadowPod) admission.Response {
	if !isConsumer {
		return admission.Allowed("")
	}
	var before client.Object
	if old != nil {
		before = old
	}
	return v.budget.respond(ctx, req, consumer, shadowPodsResource, sp, before)
}
