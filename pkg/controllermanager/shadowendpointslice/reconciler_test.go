package shadowendpointslice

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/test/harness"
)

// consumer is the cluster the twin namespaces of the tests belong to.
const consumer = "rome"

// newNamespace creates a namespace with labels for one test.
func newNamespace(ctx context.Context, t *testing.T, labels map[string]string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "shes-", Labels: labels}}
	if err := cl.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Delete(context.Background(), ns) })
	return ns.Name
}

// twinNamespace creates a namespace labelled as the provider's twin
// reconciler labels those it makes for consumer.
func twinNamespace(ctx context.Context, t *testing.T) string {
	t.Helper()
	return newNamespace(ctx, t, map[string]string{
		consts.ManagedByLabel: consts.ManagedByValue, consts.TwinNamespaceLabel: "true", consts.RemoteClusterIDLabel: consumer,
	})
}

func endpoint(ip string) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}
}

// newSES is a ShadowEndpointSlice of Service web as the consumer's
// reflection writes it, with one endpoint per address. Its port leaves
// name and protocol to the API server's defaults.
func newSES(ns, name string, ips ...string) *offv1beta1.ShadowEndpointSlice {
	var endpoints []discoveryv1.Endpoint
	for _, ip := range ips {
		endpoints = append(endpoints, endpoint(ip))
	}
	return &offv1beta1.ShadowEndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{
			discoveryv1.LabelServiceName: "web",
			consts.OriginClusterIDLabel:  consumer,
			consts.ManagedByLabel:        consts.ManagedByValue,
		}},
		Spec: offv1beta1.ShadowEndpointSliceSpec{Template: offv1beta1.EndpointSliceTemplate{
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   endpoints,
			Ports:       []discoveryv1.EndpointPort{{Port: ptr.To[int32](8080)}},
		}},
	}
}

// modify reads ses afresh, applies change and writes it back, retrying on
// conflicts: the controller writes the status meanwhile.
func modify(ctx context.Context, t *testing.T, ses *offv1beta1.ShadowEndpointSlice, change func(*offv1beta1.ShadowEndpointSlice)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(ses), ses); err != nil {
			return err
		}
		change(ses)
		return cl.Update(ctx, ses)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func create(ctx context.Context, t *testing.T, o client.Object) {
	t.Helper()
	if err := cl.Create(ctx, o); err != nil {
		t.Fatal(err)
	}
}

// waitSlice waits until the EndpointSlice named key exists and satisfies
// cond, and returns it.
func waitSlice(ctx context.Context, t *testing.T, key client.Object, what string, cond func(*discoveryv1.EndpointSlice) bool) *discoveryv1.EndpointSlice {
	t.Helper()
	var s discoveryv1.EndpointSlice
	harness.Eventually(ctx, t, "EndpointSlice "+key.GetName()+" "+what, func() (bool, error) {
		err := cl.Get(ctx, client.ObjectKeyFromObject(key), &s)
		return err == nil && cond(&s), client.IgnoreNotFound(err)
	})
	return &s
}

func waitSliceGone(ctx context.Context, t *testing.T, key client.Object) {
	t.Helper()
	harness.Eventually(ctx, t, "EndpointSlice "+key.GetName()+" gone", func() (bool, error) {
		err := cl.Get(ctx, client.ObjectKeyFromObject(key), &discoveryv1.EndpointSlice{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// waitReason waits until the Ready condition of ses has reason (and is
// True exactly when the reason is ReasonSynced) for its current
// generation, and returns the ShadowEndpointSlice.
func waitReason(ctx context.Context, t *testing.T, ses *offv1beta1.ShadowEndpointSlice, reason string) *offv1beta1.ShadowEndpointSlice {
	t.Helper()
	var got offv1beta1.ShadowEndpointSlice
	want := metav1.ConditionFalse
	if reason == ReasonSynced {
		want = metav1.ConditionTrue
	}
	harness.Eventually(ctx, t, "ShadowEndpointSlice "+ses.Name+" "+reason, func() (bool, error) {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(ses), &got); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(got.Status.Conditions, ConditionReady)
		return c != nil && c.Reason == reason && c.Status == want && c.ObservedGeneration == got.Generation, nil
	})
	return &got
}

// waitEvent waits for a Warning Event of the given reason about ses.
func waitEvent(ctx context.Context, t *testing.T, ses *offv1beta1.ShadowEndpointSlice, reason string) {
	t.Helper()
	harness.Eventually(ctx, t, fmt.Sprintf("a Warning event %s on %s", reason, ses.Name), func() (bool, error) {
		var events corev1.EventList
		if err := cl.List(ctx, &events, client.InNamespace(ses.Namespace)); err != nil {
			return false, err
		}
		return slices.ContainsFunc(events.Items, func(e corev1.Event) bool {
			return e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == ses.Name && e.InvolvedObject.UID == ses.UID &&
				e.Reason == reason && e.Type == corev1.EventTypeWarning
		}), nil
	})
}

func addresses(s *discoveryv1.EndpointSlice) []string {
	var out []string
	for _, e := range s.Endpoints {
		out = append(out, e.Addresses...)
	}
	return out
}

func hasAddresses(ips ...string) func(*discoveryv1.EndpointSlice) bool {
	return func(s *discoveryv1.EndpointSlice) bool { return slices.Equal(addresses(s), ips) }
}

func TestCreatesEndpointSlice(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := twinNamespace(ctx, t)
	ses := newSES(ns, "web-abcde", "10.244.0.5", "10.244.1.4")
	ses.Labels["app"] = "web"
	// A consumer cannot hand the slice to the provider's EndpointSlice
	// controller.
	ses.Labels[discoveryv1.LabelManagedBy] = "endpointslice-controller.k8s.io"
	ses.Annotations = map[string]string{"example.com/note": "reflected"}
	create(ctx, t, ses)

	s := waitSlice(ctx, t, ses, "with the endpoints", hasAddresses("10.244.0.5", "10.244.1.4"))
	checks := []struct {
		name string
		ok   bool
	}{
		{"service name label", s.Labels[discoveryv1.LabelServiceName] == "web"},
		{"user label", s.Labels["app"] == "web"},
		{"origin label", s.Labels[consts.OriginClusterIDLabel] == consumer},
		{"endpointslice managed-by", s.Labels[discoveryv1.LabelManagedBy] == ManagedBy},
		{"liqo managed-by", s.Labels[consts.ManagedByLabel] == consts.ManagedByValue},
		{"annotation", s.Annotations["example.com/note"] == "reflected"},
		{"controller owner", metav1.IsControlledBy(s, ses)},
		{"address type", s.AddressType == discoveryv1.AddressTypeIPv4},
		{"ports", len(s.Ports) == 1 && *s.Ports[0].Port == 8080},
		{"ready condition", *s.Endpoints[0].Conditions.Ready},
		// What the API server stored is what the controller wants: no
		// update follows (the defaulted port name and protocol included).
		{"nothing left to update", matches(s, forged(ses))},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: got %+v", c.name, s)
		}
	}
	got := waitReason(ctx, t, ses, ReasonSynced)
	if got.Status.Endpoints != 2 {
		t.Errorf("status endpoints %d, want 2", got.Status.Endpoints)
	}

	out, err := exec.CommandContext(ctx, provider.KubectlPath(), "--kubeconfig", provider.Kubeconfig,
		"get", "shes", "-n", ns).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ENDPOINTS") || !rowStartsWith(string(out), "web-abcde", "IPv4", "2", "True") {
		t.Errorf("kubectl get shes: %v\n%s", err, out)
	}
}

// rowStartsWith tells whether some line of a kubectl table starts with
// these fields.
func rowStartsWith(table string, fields ...string) bool {
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) >= len(fields) && slices.Equal(f[:len(fields)], fields) {
			return true
		}
	}
	return false
}

// TestProviderControllerLeavesItAlone runs a Service with a selector next
// to the reflected slice: the provider's EndpointSlice controller makes its
// own slice for the Service and must neither adopt nor delete ours.
func TestProviderControllerLeavesItAlone(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := twinNamespace(ctx, t)
	ses := newSES(ns, "web-remote", "10.244.0.5")
	create(ctx, t, ses)
	ours := waitSlice(ctx, t, ses, "created", hasAddresses("10.244.0.5"))
	create(ctx, t, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Port: 80}}},
	})
	harness.Eventually(ctx, t, "the provider's own slice of Service web", func() (bool, error) {
		var list discoveryv1.EndpointSliceList
		err := cl.List(ctx, &list, client.InNamespace(ns),
			client.MatchingLabels{discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io", discoveryv1.LabelServiceName: "web"})
		return err == nil && len(list.Items) > 0, err
	})
	var now discoveryv1.EndpointSlice
	if err := cl.Get(ctx, client.ObjectKeyFromObject(ours), &now); err != nil {
		t.Fatalf("our slice after the provider's controller ran: %v", err)
	}
	if now.ResourceVersion != ours.ResourceVersion {
		t.Errorf("our slice was changed: %+v", now)
	}
}

func TestRevertsDrift(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := twinNamespace(ctx, t)
	ses := newSES(ns, "web-drift", "10.244.0.5")
	create(ctx, t, ses)
	s := waitSlice(ctx, t, ses, "created", hasAddresses("10.244.0.5"))

	s.Endpoints = append(s.Endpoints, endpoint("10.0.0.66"))
	s.Labels["extra"] = "x"
	delete(s.Labels, discoveryv1.LabelServiceName)
	if err := cl.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	waitSlice(ctx, t, ses, "reverted", func(s *discoveryv1.EndpointSlice) bool {
		return hasAddresses("10.244.0.5")(s) && s.Labels["extra"] == "" && s.Labels[discoveryv1.LabelServiceName] == "web"
	})

	// Without our managed-by label the slice falls out of the manager's
	// cache (a delete event there): the controller must find it all the
	// same and put the label back.
	patch := []byte(`{"metadata":{"labels":{"` + discoveryv1.LabelManagedBy + `":null}}}`)
	if err := cl.Patch(ctx, s, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	waitSlice(ctx, t, ses, "labelled again", func(s *discoveryv1.EndpointSlice) bool {
		return s.Labels[discoveryv1.LabelManagedBy] == ManagedBy
	})

	// A deleted slice comes back.
	if err := cl.Delete(ctx, s); err != nil {
		t.Fatal(err)
	}
	waitSlice(ctx, t, ses, "recreated", func(n *discoveryv1.EndpointSlice) bool {
		return n.UID != s.UID && hasAddresses("10.244.0.5")(n)
	})
}

func TestTemplateUpdate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := twinNamespace(ctx, t)
	ses := newSES(ns, "web-update", "10.244.0.5")
	create(ctx, t, ses)
	first := waitSlice(ctx, t, ses, "created", hasAddresses("10.244.0.5"))

	modify(ctx, t, ses, func(ses *offv1beta1.ShadowEndpointSlice) {
		ses.Spec.Template.Endpoints = append(ses.Spec.Template.Endpoints, endpoint("10.244.1.4"), endpoint("10.244.2.7"))
		ses.Spec.Template.Ports = []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](9090), Protocol: ptr.To(corev1.ProtocolUDP)}}
		ses.Labels["version"] = "2"
	})
	s := waitSlice(ctx, t, ses, "updated", func(s *discoveryv1.EndpointSlice) bool {
		return hasAddresses("10.244.0.5", "10.244.1.4", "10.244.2.7")(s) && s.Labels["version"] == "2"
	})
	if s.UID != first.UID {
		t.Errorf("the slice was replaced, want it updated in place")
	}
	if p := s.Ports; len(p) != 1 || *p[0].Name != "http" || *p[0].Port != 9090 || *p[0].Protocol != corev1.ProtocolUDP {
		t.Errorf("ports %+v, want http 9090/UDP", p)
	}
	if got := waitReason(ctx, t, ses, ReasonSynced); got.Status.Endpoints != 3 {
		t.Errorf("status endpoints %d, want 3", got.Status.Endpoints)
	}

	// The address type of an EndpointSlice is immutable: a new one
	// replaces the slice. (Its address is left out: the network fabric maps
	// IPv4 networks only, so no IPv6 address is known to be the consumer's.)
	modify(ctx, t, ses, func(ses *offv1beta1.ShadowEndpointSlice) {
		ses.Spec.Template.AddressType = discoveryv1.AddressTypeIPv6
		ses.Spec.Template.Endpoints = []discoveryv1.Endpoint{endpoint("fd00::5")}
	})
	waitSlice(ctx, t, ses, "replaced with IPv6", func(n *discoveryv1.EndpointSlice) bool {
		return n.UID != first.UID && n.AddressType == discoveryv1.AddressTypeIPv6 && len(n.Endpoints) == 0
	})
	waitReason(ctx, t, ses, ReasonSynced)
}

func TestDeletion(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := twinNamespace(ctx, t)
	ses := newSES(ns, "web-delete", "10.244.0.5")
	create(ctx, t, ses)
	waitSlice(ctx, t, ses, "created", hasAddresses("10.244.0.5"))
	if err := cl.Delete(ctx, ses); err != nil {
		t.Fatal(err)
	}
	// Well within the garbage collector's discovery period for a new CRD
	// (up to 30 s, then its own queue; about 40 s measured here): the
	// controller deletes the slice itself.
	gctx, gcancel := context.WithTimeout(ctx, 10*time.Second)
	defer gcancel()
	waitSliceGone(gctx, t, ses)
}

func TestConflict(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := twinNamespace(ctx, t)
	// Someone else's slice of that name, outside the manager's cache.
	theirs := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "web-conflict", Namespace: ns, Labels: map[string]string{"owner": "someone"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{endpoint("10.0.0.1")},
	}
	create(ctx, t, theirs)
	ses := newSES(ns, "web-conflict", "10.244.0.5")
	create(ctx, t, ses)
	got := waitReason(ctx, t, ses, ReasonConflict)
	if got.Status.Endpoints != 0 {
		t.Errorf("status endpoints %d, want 0", got.Status.Endpoints)
	}
	waitEvent(ctx, t, ses, EventConflict)
	var now discoveryv1.EndpointSlice
	if err := cl.Get(ctx, client.ObjectKeyFromObject(theirs), &now); err != nil {
		t.Fatal(err)
	}
	if now.ResourceVersion != theirs.ResourceVersion {
		t.Errorf("their slice was changed: %+v", now)
	}

	// Once it is gone, the next change of the ShadowEndpointSlice brings
	// the slice.
	if err := cl.Delete(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	modify(ctx, t, ses, func(ses *offv1beta1.ShadowEndpointSlice) {
		ses.Spec.Template.Endpoints = append(ses.Spec.Template.Endpoints, endpoint("10.244.1.4"))
	})
	waitSlice(ctx, t, ses, "ours", func(s *discoveryv1.EndpointSlice) bool {
		return metav1.IsControlledBy(s, ses) && hasAddresses("10.244.0.5", "10.244.1.4")(s)
	})
	waitReason(ctx, t, ses, ReasonSynced)
}

func TestOriginMismatch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	t.Run("another consumer's twin namespace", func(t *testing.T) {
		ns := twinNamespace(ctx, t)
		ses := newSES(ns, "web-naples", "10.244.0.5")
		ses.Labels[consts.OriginClusterIDLabel] = "naples"
		create(ctx, t, ses)
		waitReason(ctx, t, ses, ReasonOriginMismatch)
		waitEvent(ctx, t, ses, EventOriginMismatch)
		if err := cl.Get(ctx, client.ObjectKeyFromObject(ses), &discoveryv1.EndpointSlice{}); !apierrors.IsNotFound(err) {
			t.Errorf("a slice for a mismatched origin: %v", err)
		}

		// The namespace handed to naples: the slice follows.
		var n corev1.Namespace
		if err := cl.Get(ctx, types.NamespacedName{Name: ns}, &n); err != nil {
			t.Fatal(err)
		}
		n.Labels[consts.RemoteClusterIDLabel] = "naples"
		if err := cl.Update(ctx, &n); err != nil {
			t.Fatal(err)
		}
		waitSlice(ctx, t, ses, "once the namespace is naples'", hasAddresses("10.244.0.5"))
		waitReason(ctx, t, ses, ReasonSynced)

		// And it goes once the origin stops matching.
		modify(ctx, t, ses, func(ses *offv1beta1.ShadowEndpointSlice) { ses.Labels[consts.OriginClusterIDLabel] = consumer })
		waitSliceGone(ctx, t, ses)
		waitReason(ctx, t, ses, ReasonOriginMismatch)
	})

	t.Run("no twin namespace", func(t *testing.T) {
		ns := newNamespace(ctx, t, map[string]string{consts.RemoteClusterIDLabel: consumer})
		ses := newSES(ns, "web-plain", "10.244.0.5")
		create(ctx, t, ses)
		waitReason(ctx, t, ses, ReasonOriginMismatch)
		waitEvent(ctx, t, ses, EventOriginMismatch)
	})

	t.Run("no origin label", func(t *testing.T) {
		ns := twinNamespace(ctx, t)
		ses := newSES(ns, "web-anonymous", "10.244.0.5")
		delete(ses.Labels, consts.OriginClusterIDLabel)
		create(ctx, t, ses)
		waitReason(ctx, t, ses, ReasonOriginMismatch)
	})
}

// TestRejected gives a template the API server refuses as an
// EndpointSlice (the CRD's schema does not check a port's name; an
// address that is no IP never gets that far: no translation takes it).
func TestRejected(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := twinNamespace(ctx, t)
	ses := newSES(ns, "web-invalid", "10.244.0.5")
	ses.Spec.Template.Ports[0].Name = ptr.To("Not_A_Port_Name")
	create(ctx, t, ses)
	waitReason(ctx, t, ses, ReasonRejected)
	waitEvent(ctx, t, ses, EventRejected)

	modify(ctx, t, ses, func(ses *offv1beta1.ShadowEndpointSlice) {
		ses.Spec.Template.Ports[0].Name = ptr.To("http")
	})
	waitSlice(ctx, t, ses, "once the template is valid", hasAddresses("10.244.0.5"))
	waitReason(ctx, t, ses, ReasonSynced)
}

// forged is the slice the provider keeps for ses of the tests' consumers,
// whose CIDRs it keeps as they are (see configureConsumers).
func forged(ses *offv1beta1.ShadowEndpointSlice) *discoveryv1.EndpointSlice {
	s, _ := ForgeEndpointSlice(ses, same)
	return s
}
