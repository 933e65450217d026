package imports

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/mcs/record"
	"github.com/liqo-go/liqo/test/harness"
)

func timeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// newNamespace makes one namespace of the same name in both clusters
// (namespace sameness).
func newNamespace(ctx context.Context, t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "mcs-import-"}}
	if err := romeCl.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	if err := milanCl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Name}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, c := range []client.Client{romeCl, milanCl} {
			_ = c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Name}})
		}
	})
	return ns.Name
}

// exportHello creates, through c, Service hello on TCP port port, its
// EndpointSlice with addrs (a selector-less Service: the test plays the
// pods) and its ServiceExport. It returns the slice.
func exportHello(ctx context.Context, t *testing.T, c client.Client, ns string, port int32, addrs ...string) *discoveryv1.EndpointSlice {
	t.Helper()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "tcp", Port: port}}}}
	eps := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "hello-1", Namespace: ns,
		Labels: map[string]string{discoveryv1.LabelServiceName: "hello", discoveryv1.LabelManagedBy: "test"}},
		AddressType: discoveryv1.AddressTypeIPv4, Ports: []discoveryv1.EndpointPort{{Name: ptr.To("tcp"), Port: ptr.To(port + 8000)}}}
	setEndpoints(eps, addrs...)
	for _, o := range []client.Object{svc, eps, &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: ns}}} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	return eps
}

func setEndpoints(eps *discoveryv1.EndpointSlice, addrs ...string) {
	eps.Endpoints = nil
	for _, a := range addrs {
		eps.Endpoints = append(eps.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}})
	}
}

// awaitImport waits until c holds the import of hello in ns with, from
// each cluster of want, the endpoints at the addresses listed, and
// returns the ServiceImport.
func awaitImport(ctx context.Context, t *testing.T, c client.Client, ns string, want map[string][]string) *mcsv1beta1.ServiceImport {
	t.Helper()
	si := &mcsv1beta1.ServiceImport{}
	harness.Eventually(ctx, t, "the import of hello", func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello"}, si); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		var list discoveryv1.EndpointSliceList
		if err := c.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{mcsv1beta1.LabelServiceName: "hello"}); err != nil {
			return false, err
		}
		got := map[string][]string{}
		for _, s := range list.Items {
			if s.Labels[discoveryv1.LabelManagedBy] != ManagedBy || s.Labels[discoveryv1.LabelServiceName] != ServiceName("hello") {
				return false, nil
			}
			addrs := []string{}
			for _, ep := range s.Endpoints {
				addrs = append(addrs, ep.Addresses...)
			}
			slices.Sort(addrs)
			got[s.Labels[mcsv1beta1.LabelSourceCluster]] = addrs
		}
		if len(got) != len(want) {
			return false, nil
		}
		for k, v := range want {
			if !slices.Equal(got[k], v) {
				return false, nil
			}
		}
		return len(si.Status.Clusters) == len(want), nil
	})
	return si
}

// awaitNoImport waits until c holds nothing of the import of hello in ns.
func awaitNoImport(ctx context.Context, t *testing.T, c client.Client, ns string) {
	t.Helper()
	harness.Eventually(ctx, t, "the import of hello gone", func() (bool, error) {
		var list discoveryv1.EndpointSliceList
		if err := c.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{mcsv1beta1.LabelServiceName: "hello"}); err != nil {
			return false, err
		}
		errSI := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello"}, &mcsv1beta1.ServiceImport{})
		errSvc := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ServiceName("hello")}, &corev1.Service{})
		return len(list.Items) == 0 && apierrors.IsNotFound(errSI) && apierrors.IsNotFound(errSvc), nil
	})
}

// TestExportFromProvider: milan (the provider) exports hello; rome
// imports it, with a ClusterSetIP Service of its own and milan's endpoints
// at their remapped addresses, which follow milan's scale up and down;
// milan imports its own export too. Unexported, the imports go from both.
func TestExportFromProvider(t *testing.T) {
	ctx := timeout(t)
	ns := newNamespace(ctx, t)
	eps := exportHello(ctx, t, milanCl, ns, 42, "10.244.1.5")
	si := awaitImport(ctx, t, romeCl, ns, map[string][]string{"milan": {"10.71.1.5"}})
	svc := &corev1.Service{}
	if err := romeCl.Get(ctx, client.ObjectKey{Namespace: ns, Name: ServiceName("hello")}, svc); err != nil {
		t.Fatal(err)
	}
	if si.Spec.Type != mcsv1beta1.ClusterSetIP || len(si.Spec.IPs) != 1 || si.Spec.IPs[0] != svc.Spec.ClusterIP || svc.Spec.Selector != nil ||
		si.Spec.Ports[0].Port != 42 || si.Status.Clusters[0].Cluster != "milan" {
		t.Errorf("ServiceImport %+v, Service %+v", si.Spec, svc.Spec)
	}
	awaitImport(ctx, t, milanCl, ns, map[string][]string{"milan": {"10.244.1.5"}})

	setEndpoints(eps, "10.244.1.5", "10.244.1.6", "10.244.2.7")
	if err := milanCl.Update(ctx, eps); err != nil {
		t.Fatal(err)
	}
	awaitImport(ctx, t, romeCl, ns, map[string][]string{"milan": {"10.71.1.5", "10.71.1.6", "10.71.2.7"}})
	setEndpoints(eps, "10.244.2.7")
	if err := milanCl.Update(ctx, eps); err != nil {
		t.Fatal(err)
	}
	awaitImport(ctx, t, romeCl, ns, map[string][]string{"milan": {"10.71.2.7"}})

	if err := milanCl.Delete(ctx, &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	awaitNoImport(ctx, t, romeCl, ns)
	awaitNoImport(ctx, t, milanCl, ns)
	awaitRecords(ctx, t, ns, 0)
}

// TestExportFromConsumer: rome (the consumer) exports hello, through its
// record on milan; milan imports it at the remapped addresses. Both
// exporting, both clusters' endpoints are in each import.
func TestExportFromConsumer(t *testing.T) {
	ctx := timeout(t)
	ns := newNamespace(ctx, t)
	exportHello(ctx, t, romeCl, ns, 42, "10.244.3.5")
	awaitImport(ctx, t, milanCl, ns, map[string][]string{"rome": {"10.71.3.5"}})
	awaitImport(ctx, t, romeCl, ns, map[string][]string{"rome": {"10.244.3.5"}})

	exportHello(ctx, t, milanCl, ns, 42, "10.244.1.5")
	awaitImport(ctx, t, milanCl, ns, map[string][]string{"rome": {"10.71.3.5"}, "milan": {"10.244.1.5"}})
	awaitImport(ctx, t, romeCl, ns, map[string][]string{"rome": {"10.244.3.5"}, "milan": {"10.71.1.5"}})

	if err := romeCl.Delete(ctx, &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	awaitImport(ctx, t, milanCl, ns, map[string][]string{"milan": {"10.244.1.5"}})
	awaitImport(ctx, t, romeCl, ns, map[string][]string{"milan": {"10.71.1.5"}})
}

// awaitRecords waits until n records of exports in ns are left, in
// milan's tenant namespace of rome.
func awaitRecords(ctx context.Context, t *testing.T, ns string, n int) {
	t.Helper()
	harness.Eventually(ctx, t, "the records", func() (bool, error) {
		var list offv1beta1.ExportRecordList
		if err := milanCl.List(ctx, &list, client.InNamespace(consts.TenantNamespace("rome"))); err != nil {
			return false, err
		}
		got := 0
		for _, r := range list.Items {
			if r.Spec.Namespace == ns {
				got++
			}
		}
		return got == n, nil
	})
}

// awaitConflict waits for the Conflict condition of c's export of hello.
func awaitConflict(ctx context.Context, t *testing.T, c client.Client, ns string, status metav1.ConditionStatus, reason string) *metav1.Condition {
	t.Helper()
	var got *metav1.Condition
	harness.Eventually(ctx, t, "Conflict="+string(status)+" "+reason, func() (bool, error) {
		se := &mcsv1beta1.ServiceExport{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello"}, se); err != nil {
			return false, err
		}
		got = meta.FindStatusCondition(se.Status.Conditions, string(mcsv1beta1.ServiceExportConditionConflict))
		return got != nil && got.Status == status && got.Reason == reason, nil
	})
	return got
}

// TestConflictAcrossClusters: rome's export (the older) and milan's
// disagree on the port; both report the conflict, rome's winning, and the
// import has rome's port. Once rome's export is deleted, milan's is alone
// and in no conflict.
func TestConflictAcrossClusters(t *testing.T) {
	ctx := timeout(t)
	ns := newNamespace(ctx, t)
	exportHello(ctx, t, romeCl, ns, 42, "10.244.3.5")
	awaitImport(ctx, t, milanCl, ns, map[string][]string{"rome": {"10.71.3.5"}})
	// A second apart: the creation timestamps have a second's precision.
	time.Sleep(1100 * time.Millisecond)
	exportHello(ctx, t, milanCl, ns, 43, "10.244.1.5")
	c := awaitConflict(ctx, t, milanCl, ns, metav1.ConditionTrue, "PortConflict")
	if !strings.Contains(c.Message, "cluster rome, which wins") {
		t.Errorf("message %q", c.Message)
	}
	awaitConflict(ctx, t, romeCl, ns, metav1.ConditionTrue, "PortConflict")

	if err := romeCl.Delete(ctx, &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	awaitConflict(ctx, t, milanCl, ns, metav1.ConditionFalse, "NoConflicts")
	si := awaitImport(ctx, t, romeCl, ns, map[string][]string{"milan": {"10.71.1.5"}})
	if si.Spec.Ports[0].Port != 43 {
		t.Errorf("ports %v, want milan's", si.Spec.Ports)
	}
}

// TestHostileRecord: rome, as a hostile consumer, writes on milan a record
// claiming to be naples', and one with an address outside its networks
// (milan's Services); milan refuses both, says so in their status and in
// a Warning Event, and imports neither.
func TestHostileRecord(t *testing.T) {
	ctx := timeout(t)
	ns := newNamespace(ctx, t)
	tenant := consts.TenantNamespace("rome")
	se := &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.Now()}}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "tcp", Port: 42}}}}
	slice := func(addr string) []discoveryv1.EndpointSlice {
		return []discoveryv1.EndpointSlice{{AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{addr}}}}}
	}
	claiming := record.Forge("naples", tenant, se, svc, slice("10.244.1.5"))
	claiming.Name = record.Name("rome", ns, "hello")
	svc2 := svc.DeepCopy()
	svc2.Name = "other"
	foreign := record.Forge("rome", tenant, se, svc2, slice("10.96.0.1"))
	for _, r := range []*offv1beta1.ExportRecord{claiming, foreign} {
		r.TypeMeta = metav1.TypeMeta{}
		if err := milanCl.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = milanCl.Delete(context.Background(), r) })
	}
	for _, tt := range []struct {
		r    *offv1beta1.ExportRecord
		want string
	}{{claiming, `claims source cluster "naples"`}, {foreign, "10.96.0.1 is not in the cluster's own networks"}} {
		harness.Eventually(ctx, t, "record "+tt.r.Name+" refused", func() (bool, error) {
			got := &offv1beta1.ExportRecord{}
			if err := milanCl.Get(ctx, client.ObjectKeyFromObject(tt.r), got); err != nil {
				return false, err
			}
			c := meta.FindStatusCondition(got.Status.Conditions, offv1beta1.ExportRecordAcceptedCondition)
			return c != nil && c.Status == metav1.ConditionFalse && c.Reason == "Refused" && strings.Contains(c.Message, tt.want), nil
		})
		harness.Eventually(ctx, t, "a Warning Event on record "+tt.r.Name, func() (bool, error) {
			var events corev1.EventList
			if err := milanCl.List(ctx, &events, client.InNamespace(tenant)); err != nil {
				return false, err
			}
			for _, e := range events.Items {
				if e.InvolvedObject.Name == tt.r.Name && e.Type == corev1.EventTypeWarning && e.Reason == "ExportRefused" {
					return true, nil
				}
			}
			return false, nil
		})
	}
	for _, name := range []string{"hello", "other"} {
		err := milanCl.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &mcsv1beta1.ServiceImport{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("ServiceImport %s in milan: %v, want none", name, err)
		}
	}
}
