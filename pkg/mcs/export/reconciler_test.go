package export

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/liqo-go/liqo/pkg/mcs/merge"
	"github.com/liqo-go/liqo/test/harness"
)

func newNamespace(ctx context.Context, t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "mcs-export-"}}
	if err := cl.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Delete(context.Background(), ns) })
	return ns.Name
}

// hello is a ClusterIP Service on TCP port 42 (spec edits it).
func hello(ns string, edit func(*corev1.ServiceSpec)) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: ns},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "tcp", Port: 42}}},
	}
	if edit != nil {
		edit(&svc.Spec)
	}
	return svc
}

func create(ctx context.Context, t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := cl.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
}

func exportOf(ns string) *mcsv1beta1.ServiceExport {
	return &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: ns}}
}

// awaitCondition waits until the export's condition typ has status and
// reason (status "" for no such condition), and returns it.
func awaitCondition(ctx context.Context, t *testing.T, ns, typ string, status metav1.ConditionStatus, reason string) *metav1.Condition {
	t.Helper()
	var got *metav1.Condition
	harness.Eventually(ctx, t, typ+"="+string(status)+" "+reason, func() (bool, error) {
		se := &mcsv1beta1.ServiceExport{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello"}, se); err != nil {
			return false, err
		}
		got = meta.FindStatusCondition(se.Status.Conditions, typ)
		if status == "" {
			return got == nil, nil
		}
		return got != nil && got.Status == status && got.Reason == reason && got.ObservedGeneration == se.Generation, nil
	})
	return got
}

// awaitEvent waits for an Event of reason on the export.
func awaitEvent(ctx context.Context, t *testing.T, ns, typ, reason string) {
	t.Helper()
	harness.Eventually(ctx, t, "a "+typ+" Event "+reason, func() (bool, error) {
		var events corev1.EventList
		if err := cl.List(ctx, &events, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Kind == "ServiceExport" && e.Type == typ && e.Reason == reason {
				return true, nil
			}
		}
		return false, nil
	})
}

func timeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestValidExport: the export of a ClusterIP Service is Valid and, alone in
// the clusterset, in no conflict; kubectl get says so.
func TestValidExport(t *testing.T) {
	ctx := timeout(t)
	ns := newNamespace(ctx, t)
	create(ctx, t, hello(ns, nil), exportOf(ns))
	awaitCondition(ctx, t, ns, "Valid", metav1.ConditionTrue, "Valid")
	awaitCondition(ctx, t, ns, "Conflict", metav1.ConditionFalse, "NoConflicts")
	awaitEvent(ctx, t, ns, corev1.EventTypeNormal, "Valid")

	out, err := exec.CommandContext(ctx, cluster.KubectlPath(), "--kubeconfig", cluster.Kubeconfig, "get", "serviceexports", "-n", ns).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl get: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0])[:4], " ") != "NAME VALID READY CONFLICT" ||
		strings.Fields(lines[1])[1] != "True" || strings.Fields(lines[1])[2] != "False" {
		t.Errorf("kubectl get serviceexports printed:\n%s", out)
	}
}

// TestExportFollowsItsService: an export whose Service is missing is not
// Valid (NoService, with a Warning) and takes no part in conflicts; it
// becomes Valid when the Service comes, and NoService again when it goes.
func TestExportFollowsItsService(t *testing.T) {
	ctx := timeout(t)
	ns := newNamespace(ctx, t)
	create(ctx, t, exportOf(ns))
	c := awaitCondition(ctx, t, ns, "Valid", metav1.ConditionFalse, "NoService")
	if !strings.Contains(c.Message, "no Service hello") {
		t.Errorf("message %q does not name the missing Service", c.Message)
	}
	awaitCondition(ctx, t, ns, "Conflict", "", "")
	awaitEvent(ctx, t, ns, corev1.EventTypeWarning, "NoService")

	svc := hello(ns, nil)
	create(ctx, t, svc)
	awaitCondition(ctx, t, ns, "Valid", metav1.ConditionTrue, "Valid")
	awaitCondition(ctx, t, ns, "Conflict", metav1.ConditionFalse, "NoConflicts")

	if err := cl.Delete(ctx, svc); err != nil {
		t.Fatal(err)
	}
	awaitCondition(ctx, t, ns, "Valid", metav1.ConditionFalse, "NoService")
	awaitCondition(ctx, t, ns, "Conflict", "", "")
}

// TestExternalNameRefused: an ExternalName Service cannot be exported.
func TestExternalNameRefused(t *testing.T) {
	ctx := timeout(t)
	ns := newNamespace(ctx, t)
	create(ctx, t, hello(ns, func(s *corev1.ServiceSpec) {
		s.Type, s.ExternalName, s.Ports = corev1.ServiceTypeExternalName, "example.com", nil
	}), exportOf(ns))
	c := awaitCondition(ctx, t, ns, "Valid", metav1.ConditionFalse, "InvalidServiceType")
	if !strings.Contains(c.Message, "ExternalName") {
		t.Errorf("message %q", c.Message)
	}
	awaitCondition(ctx, t, ns, "Conflict", "", "")
	awaitEvent(ctx, t, ns, corev1.EventTypeWarning, "InvalidServiceType")
}

// TestConflictOldestWins: an older headless export of the Service by
// another cluster puts this cluster's ClusterIP export in conflict (the
// older wins, and the condition says so); once that export is gone the
// conflict is too; a newer export with another port is in conflict with
// this cluster's, which wins.
func TestConflictOldestWins(t *testing.T) {
	ctx := timeout(t)
	ns := newNamespace(ctx, t)
	create(ctx, t, hello(ns, nil), exportOf(ns))
	awaitCondition(ctx, t, ns, "Valid", metav1.ConditionTrue, "Valid")

	older := merge.Export{Cluster: "milan", Created: time.Now().Add(-time.Hour), Type: mcsv1beta1.Headless,
		Ports:           []mcsv1beta1.ServicePort{{Name: "tcp", Protocol: corev1.ProtocolTCP, Port: 42}},
		SessionAffinity: corev1.ServiceAffinityNone, IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol}}
	peers.set(ns, "hello", older)
	c := awaitCondition(ctx, t, ns, "Conflict", metav1.ConditionTrue, "TypeConflict")
	if !strings.Contains(c.Message, "cluster milan, which wins") || !strings.Contains(c.Message, localID+" on type") {
		t.Errorf("message %q does not say milan's older export wins over %s's type", c.Message, localID)
	}
	awaitEvent(ctx, t, ns, corev1.EventTypeWarning, "ExportConflict")

	peers.set(ns, "hello")
	awaitCondition(ctx, t, ns, "Conflict", metav1.ConditionFalse, "NoConflicts")

	newer := older
	newer.Created, newer.Type = time.Now().Add(time.Hour), mcsv1beta1.ClusterSetIP
	newer.Ports = []mcsv1beta1.ServicePort{{Name: "tcp", Protocol: corev1.ProtocolTCP, Port: 43}}
	peers.set(ns, "hello", newer)
	c = awaitCondition(ctx, t, ns, "Conflict", metav1.ConditionTrue, "PortConflict")
	if !strings.Contains(c.Message, "cluster "+localID+", which wins") {
		t.Errorf("message %q does not say %s's export wins", c.Message, localID)
	}
}
