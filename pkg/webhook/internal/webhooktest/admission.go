package webhooktest

import (
	"encoding/json"

	admissionv1 "k8s.io/api/admission/v1"
	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"strings"
	"testing"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// WantRefused fails unless resp refuses the request with a message
// containing every fragment.
func WantRefused(t *testing.T, what string, resp admission.Response, fragments ...string) {
	t.Helper()
	msg := ""
	if resp.Result != nil {
		msg = resp.Result.Message
	}
	if resp.Allowed {
		t.Errorf("%s: admitted, want a refusal containing %q", what, fragments)
		return
	}
	for _, f := range fragments {
		if !strings.Contains(msg, f) {
			t.Errorf("%s: refused with %q, want it to contain %q", what, msg, f)
		}
	}
}

// ShadowPodReview is consumer id's admission request creating sp, or updating old
// into sp. edit, if set, rewrites the JSON of sp, to carry what the Go
// types cannot (a malformed quantity).
func ShadowPodReview(t *testing.T, id string, sp, old *offv1beta1.ShadowPod, dryRun bool, edit func([]byte) []byte) admission.Request {
	t.Helper()
	encode := func(o *offv1beta1.ShadowPod) []byte {
		o = o.DeepCopy()
		o.APIVersion, o.Kind = offv1beta1.GroupVersion.String(), "ShadowPod"
		raw, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	raw := encode(sp)
	if edit != nil {
		raw = edit(raw)
	}
	req := admissionv1.AdmissionRequest{
		UID:       "test",
		Kind:      metav1.GroupVersionKind{Group: offv1beta1.GroupVersion.Group, Version: offv1beta1.GroupVersion.Version, Kind: "ShadowPod"},
		Resource:  metav1.GroupVersionResource{Group: offv1beta1.GroupVersion.Group, Version: offv1beta1.GroupVersion.Version, Resource: "shadowpods"},
		Name:      sp.Name,
		Namespace: sp.Namespace,
		Operation: admissionv1.Create,
		UserInfo:  authnv1.UserInfo{Username: consts.ConsumerUser(id), Groups: []string{consts.ConsumerGroup}},
		Object:    runtime.RawExtension{Raw: raw},
		DryRun:    ptr.To(dryRun),
	}
	if old != nil {
		req.Operation = admissionv1.Update
		req.OldObject = runtime.RawExtension{Raw: encode(old)}
	}
	return admission.Request{AdmissionRequest: req}
}
