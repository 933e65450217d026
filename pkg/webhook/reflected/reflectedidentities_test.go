package reflected_test

import (
	"context"
	"encoding/json"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/liqo-go/liqo/apis"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/webhook/budget"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
	"github.com/liqo-go/liqo/pkg/webhook/reflected"
)

// serviceReview is user's admission request creating s.
func serviceReview(t *testing.T, user authnv1.UserInfo, s *corev1.Service) admission.Request {
	t.Helper()
	s = s.DeepCopy()
	s.APIVersion, s.Kind = "v1", "Service"
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{UID: "test",
		Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Service"}, Resource: metav1.GroupVersionResource{Version: "v1", Resource: "services"},
		Name: s.Name, Namespace: s.Namespace, Operation: admissionv1.Create, UserInfo: user, Object: runtime.RawExtension{Raw: raw}}}
}

// TestReflectedIdentities sends to the handler what RBAC stops before it:
// a consumer writing outside its twins and half consumer identities, which
// must be refused there too; an administrator is not judged.
func TestReflectedIdentities(t *testing.T) {
	ctx := context.Background()
	_, twins := webhooktest.ReflectingConsumer(t, "iota", "shop")
	v := reflected.NewValidator(webhooktest.Cl, admission.NewDecoder(apis.NewScheme()), reflected.ReflectedPolicy{}, budget.New(budget.DefaultObjectBudget()))
	consumerOf := func(id string) authnv1.UserInfo {
		return authnv1.UserInfo{Username: consts.ConsumerUser(id), Groups: []string{consts.ConsumerGroup}}
	}
	nodePort := webhooktest.ReflectedService("web", twins[0], "iota")
	nodePort.Spec.Type = corev1.ServiceTypeNodePort

	webhooktest.WantRefused(t, "a Service in another consumer's twin", v.Handle(ctx, serviceReview(t, consumerOf("theta"), webhooktest.ReflectedService("web", twins[0], "theta"))),
		"consumer theta may not write services in namespace shop-iota, which is not one of its twin namespaces")
	webhooktest.WantRefused(t, "a Service outside any twin", v.Handle(ctx, serviceReview(t, consumerOf("iota"), webhooktest.ReflectedService("web", "default", "iota"))),
		"consumer iota may not write services in namespace default")
	webhooktest.WantRefused(t, "a consumer name without the group",
		v.Handle(ctx, serviceReview(t, authnv1.UserInfo{Username: consts.ConsumerUser("iota")}, webhooktest.ReflectedService("web", twins[0], "iota"))),
		"is not in group "+consts.ConsumerGroup)
	webhooktest.WantRefused(t, "the group without a consumer name",
		v.Handle(ctx, serviceReview(t, authnv1.UserInfo{Username: "mallory", Groups: []string{consts.ConsumerGroup}}, webhooktest.ReflectedService("web", twins[0], "iota"))),
		"is not named "+consts.ConsumerUser(""))
	webhooktest.WantRefused(t, "the consumer's NodePort Service", v.Handle(ctx, serviceReview(t, consumerOf("iota"), nodePort)), "spec.type NodePort")
	if resp := v.Handle(ctx, serviceReview(t, authnv1.UserInfo{Username: "kubernetes-admin", Groups: []string{"system:masters"}}, nodePort)); !resp.Allowed {
		t.Errorf("an administrator's NodePort Service refused: %+v", resp.Result)
	}
	if resp := v.Handle(ctx, serviceReview(t, consumerOf("iota"), webhooktest.ReflectedService("web", twins[0], "iota"))); !resp.Allowed {
		t.Errorf("the consumer's ClusterIP Service refused: %+v", resp.Result)
	}
}
