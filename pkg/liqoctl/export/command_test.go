package export_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/liqo-go/liqo/pkg/liqoctl"
	mcsexport "github.com/liqo-go/liqo/pkg/mcs/export"
	"github.com/liqo-go/liqo/pkg/mcs/merge"
	"github.com/liqo-go/liqo/pkg/testbed"
)

// rome is the one testbed cluster the commands run against; nil with
// -short, which runs only the pure tests.
var rome *testbed.Cluster

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	testbed.Main(m, func(tb *testbed.Testbed) { rome = tb.Cluster("rome") },
		testbed.ClusterSpec{Name: "rome", Nodes: []testbed.NodePool{{Count: 0}}})
}

// milan stands for the rest of the clusterset: it exports demo/clash as a
// headless Service, long ago, so that rome's ClusterSetIP export of it
// conflicts and loses.
type milan struct {
	changed chan event.TypedGenericEvent[client.Object]
}

func (m milan) Exports(_ context.Context, namespace, name string) ([]merge.Export, error) {
	if namespace != "demo" || name != "clash" {
		return nil, nil
	}
	return []merge.Export{{Cluster: "milan", Created: time.Unix(0, 0), Type: mcsv1beta1.Headless,
		SessionAffinity: corev1.ServiceAffinityNone,
		Ports:           []mcsv1beta1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}}}}, nil
}

func (m milan) Changed() <-chan event.TypedGenericEvent[client.Object] { return m.changed }

// run executes liqoctl as its binary does and returns its exit code and
// what it printed.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var out, errOut strings.Builder
	code = liqoctl.Run(ctx, args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func want(t *testing.T, what string, code, wantCode int, text string, contains ...string) {
	t.Helper()
	if code != wantCode {
		t.Errorf("%s: exit %d, want %d:\n%s", what, code, wantCode, text)
	}
	for _, c := range contains {
		if !strings.Contains(text, c) {
			t.Errorf("%s: output lacks %q:\n%s", what, c, text)
		}
	}
}

// TestExportUnexport runs liqoctl export service and unexport service
// against a real API server: first without the Multi-Cluster Services
// CRDs, then with them and the controller manager's export reconciler,
// which sets the conditions the command waits for.
func TestExportUnexport(t *testing.T) {
	if rome == nil {
		t.Skip("needs the testbed (not run with -short)")
	}
	kubeconfig := filepath.Join(rome.Dir, "export-test.kubeconfig")
	if err := rome.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	k := []string{"--kubeconfig", kubeconfig}
	ctx := t.Context()
	cs := rome.Client()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := func(name string, spec corev1.ServiceSpec) {
		t.Helper()
		s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name}, Spec: spec}
		if _, err := cs.CoreV1().Services("demo").Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	port := []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}}
	svc("hello", corev1.ServiceSpec{Ports: port})
	svc("clash", corev1.ServiceSpec{Ports: port})
	svc("elsewhere", corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"})

	code, out, errOut := run(t, append([]string{"export", "service", "hello", "-n", "demo"}, k...)...)
	want(t, "export without the CRDs", code, liqoctl.ExitFailure, out+errOut, "Multi-Cluster Services API", "is not installed", "liqoctl install")
	code, out, errOut = run(t, append([]string{"unexport", "service", "hello", "-n", "demo"}, k...)...)
	want(t, "unexport without the CRDs", code, 0, out+errOut, "is not exported")

	c, err := rome.WithCRDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := testbed.NewManager(rome.Config, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := &mcsexport.Reconciler{ClusterID: "rome", Clusterset: milan{make(chan event.TypedGenericEvent[client.Object])}}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	if err := testbed.StartManager(ctx, mgr); err != nil {
		t.Fatal(err)
	}
	exports := func() []string {
		var l mcsv1beta1.ServiceExportList
		if err := c.List(ctx, &l, client.InNamespace("demo")); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, se := range l.Items {
			names = append(names, se.Name)
		}
		return names
	}

	t.Run("refusals create nothing", func(t *testing.T) {
		code, out, errOut := run(t, append([]string{"export", "service", "missing", "-n", "demo"}, k...)...)
		want(t, "a missing Service", code, liqoctl.ExitFailure, out+errOut, "no Service missing in namespace demo", "nothing was exported")
		code, out, errOut = run(t, append([]string{"export", "service", "elsewhere", "-n", "demo"}, k...)...)
		want(t, "an ExternalName Service", code, liqoctl.ExitFailure, out+errOut, "ExternalName, which cannot be exported")
		if got := exports(); len(got) > 0 {
			t.Errorf("ServiceExports %v were created", got)
		}
	})

	t.Run("export, again, unexport, again", func(t *testing.T) {
		code, out, errOut := run(t, append([]string{"export", "service", "hello", "-n", "demo", "--timeout", "20s"}, k...)...)
		want(t, "export", code, 0, out+errOut, "ServiceExport demo/hello created", "Valid=True (Valid)")
		if strings.Contains(out, "Conflict") {
			t.Errorf("export: a conflict reported:\n%s", out)
		}
		code, out, errOut = run(t, append([]string{"export", "service", "hello", "-n", "demo"}, k...)...)
		want(t, "export again", code, 0, out+errOut, "already exported", "Valid=True (Valid)")
		if strings.Contains(out, "created") {
			t.Errorf("export again: created again:\n%s", out)
		}
		code, out, errOut = run(t, append([]string{"unexport", "service", "hello", "-n", "demo"}, k...)...)
		want(t, "unexport", code, 0, out+errOut, "no longer exported")
		if got := exports(); len(got) > 0 {
			t.Errorf("ServiceExports %v left", got)
		}
		if _, err := cs.CoreV1().Services("demo").Get(ctx, "hello", metav1.GetOptions{}); err != nil {
			t.Errorf("the Service after unexport: %v", err)
		}
		code, out, errOut = run(t, append([]string{"unexport", "service", "hello", "-n", "demo"}, k...)...)
		want(t, "unexport again", code, 0, out+errOut, "demo/hello is not exported")
	})

	t.Run("conflict", func(t *testing.T) {
		code, out, errOut := run(t, append([]string{"export", "svc", "clash", "-n", "demo"}, k...)...)
		want(t, "export", code, 0, out+errOut, "Valid=True (Valid)", "WARN: Conflict=True (TypeConflict", "of cluster milan, which wins")
	})

	t.Run("stale export of a missing Service", func(t *testing.T) {
		// A ServiceExport made without liqoctl for a Service that does not
		// exist: the command refuses, keeps it, and says how to remove it.
		se := &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "late"}}
		if err := c.Create(ctx, se); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := run(t, append([]string{"export", "service", "late", "-n", "demo"}, k...)...)
		want(t, "export", code, liqoctl.ExitFailure, out+errOut, "no Service late", "liqoctl unexport service late -n demo")
		code, out, errOut = run(t, append([]string{"unexport", "service", "late", "-n", "demo"}, k...)...)
		want(t, "unexport", code, 0, out+errOut, "no longer exported")
	})
}
