package info

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
	"sigs.k8s.io/yaml"

	"github.com/liqo-go/liqo/apis"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/deploy/charts/liqo/crds"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/testbed"
)

// rome is the one testbed cluster the command runs against; nil with -short,
// which runs only the pure tests.
var rome *testbed.Cluster

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	testbed.Main(m, func(tb *testbed.Testbed) { rome = tb.Cluster("rome") },
		testbed.ClusterSpec{Name: "rome", Nodes: []testbed.NodePool{{Count: 1}}})
}

var (
	setupOnce  sync.Once
	setupErr   error
	kubeconfig string
)

// setup makes rome look like a cluster running Liqo (identity ConfigMap and a
// fresh controller-manager Lease) that consumes from milan (a Provider with a
// Ready virtual node) and provides to venice (a Consumer with a Quota).
func setup(t *testing.T) string {
	t.Helper()
	if rome == nil {
		t.Skip("needs the testbed (not run with -short)")
	}
	setupOnce.Do(func() {
		kubeconfig = filepath.Join(rome.Dir, "info-test.kubeconfig")
		if setupErr = rome.WriteKubeconfig(kubeconfig); setupErr == nil {
			setupErr = populate(t.Context())
		}
	})
	if setupErr != nil {
		t.Fatal(setupErr)
	}
	return kubeconfig
}

func populate(ctx context.Context) error {
	if err := crds.Install(ctx, rome.Config); err != nil {
		return err
	}
	c, err := client.New(rome.Config, client.Options{Scheme: apis.NewScheme()})
	if err != nil {
		return err
	}
	meta := func(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
	now := metav1.NewMicroTime(time.Now())
	milan := &corev1beta1.ForeignCluster{ObjectMeta: meta("", "milan"), Spec: corev1beta1.ForeignClusterSpec{ClusterID: "milan"}}
	venice := &corev1beta1.ForeignCluster{ObjectMeta: meta("", "venice"), Spec: corev1beta1.ForeignClusterSpec{ClusterID: "venice"}}
	vn := &offv1beta1.VirtualNode{ObjectMeta: meta("liqo-tenant-milan", "milan")}
	vn.Spec.ClusterID = "milan"
	vn.Spec.ResourceQuota.Hard = resources("cpu", "4", "memory", "8Gi", "pods", "110")
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "milan",
		Labels: map[string]string{consts.TypeLabel: consts.TypeVirtualNode}}}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: meta("", "liqo")},
		&corev1.ConfigMap{ObjectMeta: meta("liqo", consts.ClusterIDConfigMap),
			Data: map[string]string{consts.ClusterIDKey: "rome", consts.ClusterLabelsKey: "region=europe"}},
		&coordinationv1.Lease{ObjectMeta: meta("liqo", consts.ControllerManagerLease), Spec: coordinationv1.LeaseSpec{
			HolderIdentity: new("rome-controller-manager"), RenewTime: &now, LeaseDurationSeconds: new(int32(15))}},
		milan, venice,
		&corev1.Namespace{ObjectMeta: meta("", "liqo-tenant-milan")},
		&corev1.Namespace{ObjectMeta: meta("", "liqo-tenant-venice")},
		vn, node,
		new(quota("liqo-tenant-venice", "venice", resources("cpu", "2", "memory", "4Gi"))),
	} {
		if err := c.Create(ctx, obj); err != nil {
			return err
		}
	}
	healthy := corev1beta1.Module{Enabled: true, Summary: "Healthy", Conditions: []corev1beta1.Condition{{
		Type: corev1beta1.AuthIdentityControlPlaneStatusCondition, Status: corev1beta1.EstablishedStatus, Message: "identity ready"}}}
	milan.Status = corev1beta1.ForeignClusterStatus{Role: corev1beta1.ProviderRole, APIServerURL: "https://milan.example:6443",
		TenantNamespace: corev1beta1.TenantNamespaceType{Local: "liqo-tenant-milan", Remote: "liqo-tenant-rome"},
		Modules: corev1beta1.Modules{Authentication: healthy, Offloading: corev1beta1.Module{Enabled: true, Summary: "Healthy"},
			Networking: corev1beta1.Module{Summary: "Disabled"}}}
	venice.Status = corev1beta1.ForeignClusterStatus{Role: corev1beta1.ConsumerRole,
		Modules: corev1beta1.Modules{Authentication: healthy, Offloading: corev1beta1.Module{Enabled: true, Summary: "Healthy"},
			Networking: corev1beta1.Module{Summary: "Disabled"}}}
	for _, obj := range []client.Object{milan, venice} {
		if err := c.Status().Update(ctx, obj); err != nil {
			return err
		}
	}
	if err := populateServices(ctx, c); err != nil {
		return err
	}
	// The node IPAM controller updates the new Node too: retry on conflicts.
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(node), node); err != nil {
			return err
		}
		node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
		return c.Status().Update(ctx, node)
	})
}

// populateServices makes two ServiceExports in namespace demo, one
// exported and one whose Service is missing, and the ServiceImport of the
// first, backed by milan and rome, with their status as the MCS
// controllers write it.
func populateServices(ctx context.Context, c client.Client) error {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}); err != nil {
		return err
	}
	hello := &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "hello"}}
	gone := &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "gone"}}
	si := &mcsv1beta1.ServiceImport{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "hello"},
		Spec: mcsv1beta1.ServiceImportSpec{Type: mcsv1beta1.ClusterSetIP, IPs: []string{"10.96.100.1"},
			Ports: []mcsv1beta1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}}}
	for _, o := range []client.Object{hello, gone, si} {
		if err := c.Create(ctx, o); err != nil {
			return err
		}
	}
	hello.Status.Conditions = []metav1.Condition{mcsv1beta1.NewServiceExportCondition(mcsv1beta1.ServiceExportConditionValid, metav1.ConditionTrue, mcsv1beta1.ServiceExportReasonValid, "")}
	gone.Status.Conditions = []metav1.Condition{mcsv1beta1.NewServiceExportCondition(mcsv1beta1.ServiceExportConditionValid, metav1.ConditionFalse,
		mcsv1beta1.ServiceExportReasonNoService, "Service demo/gone does not exist")}
	si.Status.Clusters = []mcsv1beta1.ClusterStatus{{Cluster: "rome"}, {Cluster: "milan"}}
	for _, o := range []client.Object{hello, gone, si} {
		if err := c.Status().Update(ctx, o); err != nil {
			return err
		}
	}
	return nil
}

// run executes `liqoctl info` in-process and returns what it printed.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := NewCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(t.Context())
	return out.String(), err
}

func TestCommandHuman(t *testing.T) {
	kc := setup(t)
	out, err := run(t, "--kubeconfig", kc)
	if err != nil {
		t.Fatalf("liqoctl info: %v\n%s", err, out)
	}
	for _, want := range []string{
		"─ Local cluster information ─",
		"│      Cluster ID:      rome ",
		"│      Cluster labels:  region=europe ",
		"─ Active peerings ─",
		"│  milan ",
		"│      Role:                  Provider ",
		"│      Authentication status: Healthy ",
		"│      Offloading status:     Healthy ",
		"│      Networking status:     Disabled ",
		"│      Virtual nodes:         milan (Ready) ",
		"│      Resources acquired:    cpu=4, memory=8Gi, pods=110 ",
		"│  venice ",
		"│      Role:                  Consumer ",
		"│      Resources shared:      cpu=2, memory=4Gi ",
		"─ Multi-cluster services ─",
		"│  Exported ",
		"│      demo/gone:  Invalid (NoService: Service demo/gone does not exist) ",
		"│      demo/hello: Exported ",
		"│  Imported ",
		"│      demo/hello: ClusterSetIP 10.96.100.1 80/TCP, from milan, rome ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "identity ready") || strings.Contains(out, "milan.example") {
		t.Errorf("non-verbose output shows verbose details:\n%s", out)
	}
	t.Log("\n" + out)
}

func TestCommandVerbose(t *testing.T) {
	kc := setup(t)
	out, err := run(t, "--kubeconfig", kc, "--verbose")
	if err != nil {
		t.Fatalf("liqoctl info --verbose: %v\n%s", err, out)
	}
	for _, want := range []string{
		"Liqo namespace:  liqo",
		"API server URL:  " + rome.Config.Host,
		"AuthIdentityControlPlaneStatus: Established (identity ready)",
		"API server URL:          https://milan.example:6443",
		"Remote tenant namespace: liqo-tenant-rome",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("verbose output lacks %q:\n%s", want, out)
		}
	}
	// -v is the short form, as with kubectl plugins' verbose flags.
	short, err := run(t, "--kubeconfig", kc, "-v")
	if err != nil || short != out {
		t.Errorf("liqoctl info -v differs from --verbose (%v):\n%s", err, short)
	}
}

func TestCommandJSONAndYAML(t *testing.T) {
	kc := setup(t)
	for _, format := range []string{"json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			out, err := run(t, "--kubeconfig", kc, "-o", format)
			if err != nil {
				t.Fatalf("liqoctl info -o %s: %v\n%s", format, err, out)
			}
			var got Info
			if format == "json" {
				err = json.Unmarshal([]byte(out), &got)
			} else {
				err = yaml.UnmarshalStrict([]byte(out), &got)
			}
			if err != nil {
				t.Fatalf("parsing the output: %v\n%s", err, out)
			}
			t.Log("\n" + out)
			if got.Local.ClusterID != "rome" || got.Local.Labels["region"] != "europe" || got.Local.Namespace != "liqo" ||
				got.Local.APIServerURL != rome.Config.Host {
				t.Errorf("local = %+v", got.Local)
			}
			if len(got.Peerings) != 2 || got.Peerings[0].ClusterID != "milan" || got.Peerings[1].ClusterID != "venice" {
				t.Fatalf("peerings = %+v", got.Peerings)
			}
			m := got.Peerings[0]
			if m.Role != "Provider" || m.Authentication.Status != "Healthy" || len(m.Authentication.Conditions) != 1 ||
				m.Networking.Status != "Disabled" || m.APIServerURL != "https://milan.example:6443" ||
				m.TenantNamespace != (TenantNamespace{Local: "liqo-tenant-milan", Remote: "liqo-tenant-rome"}) {
				t.Errorf("milan = %+v", m)
			}
			if len(m.VirtualNodes) != 1 || m.VirtualNodes[0] != (VirtualNodeInfo{Name: "milan", Ready: true}) {
				t.Errorf("milan's virtual nodes = %+v", m.VirtualNodes)
			}
			if m.ResourcesAcquired["cpu"] != "4" || m.ResourcesAcquired["memory"] != "8Gi" || m.ResourcesAcquired["pods"] != "110" {
				t.Errorf("milan's resources acquired = %v", m.ResourcesAcquired)
			}
			wantServices := Services{
				Exports: []ExportInfo{{Namespace: "demo", Name: "gone", Status: ExportInvalid, Reason: "NoService", Message: "Service demo/gone does not exist"},
					{Namespace: "demo", Name: "hello", Status: ExportExported}},
				Imports: []ImportInfo{{Namespace: "demo", Name: "hello", Type: "ClusterSetIP", IPs: []string{"10.96.100.1"}, Ports: []string{"80/TCP"},
					Clusters: []string{"milan", "rome"}}},
			}
			if !reflect.DeepEqual(got.Services, wantServices) {
				t.Errorf("services = %+v, want %+v", got.Services, wantServices)
			}
			if v := got.Peerings[1]; v.Role != "Consumer" || v.ResourcesShared["cpu"] != "2" || v.ResourcesAcquired != nil {
				t.Errorf("venice = %+v", v)
			}
		})
	}
}

func TestCommandErrors(t *testing.T) {
	kc := setup(t)
	for _, tt := range []struct {
		name  string
		args  []string
		wants []string
	}{
		{"wrong namespace", []string{"--kubeconfig", kc, "-n", "not-liqo"}, []string{`namespace "not-liqo"`, "--namespace"}},
		{"bad output", []string{"--kubeconfig", kc, "-o", "xml"}, []string{`"xml"`, "-o, --output", "json", "yaml"}},
		{"missing kubeconfig", []string{"--kubeconfig", filepath.Join(t.TempDir(), "none")}, []string{"kubeconfig", "none"}},
		{"extra argument", []string{"--kubeconfig", kc, "milan"}, []string{"unknown command"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := run(t, tt.args...)
			if err == nil {
				t.Fatalf("no error; output:\n%s", out)
			}
			t.Log(err)
			for _, want := range tt.wants {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
		})
	}
}

// TestCommandPeerAndGet: `info peer ID` shows that peering only, its JSON
// is keyed by cluster ID, --get returns one field for scripts, and an ID
// that is not peered is named in the error with the peered ones.
func TestCommandPeerAndGet(t *testing.T) {
	kc := setup(t)
	out, err := run(t, "peer", "milan", "--kubeconfig", kc)
	if err != nil {
		t.Fatalf("info peer milan: %v\n%s", err, out)
	}
	if !strings.Contains(out, "│  milan ") || strings.Contains(out, "venice") || strings.Contains(out, "Local cluster information") {
		t.Errorf("info peer milan shows more or less than milan's peering:\n%s", out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--get", "local.clusterID"}, "rome"},
		{[]string{"--get", "peerings.0.clusterID"}, "milan"},
		{[]string{"peer", "milan", "venice", "--get", "venice.role"}, "Consumer"},
		{[]string{"peer", "milan", "--get", "milan.offloading.status"}, "Healthy"},
	} {
		out, err := run(t, append(tc.args, "--kubeconfig", kc)...)
		if err != nil || strings.TrimSpace(out) != tc.want {
			t.Errorf("info %v printed %q (%v), want %q", tc.args, out, err, tc.want)
		}
	}
	out, err = run(t, "peer", "milan", "-o", "json", "--kubeconfig", kc)
	if err != nil || !strings.Contains(out, `"milan": {`) {
		t.Errorf("info peer -o json is not keyed by cluster ID (%v):\n%s", err, out)
	}
	if _, err := run(t, "peer", "paris", "--kubeconfig", kc); err == nil || !strings.Contains(err.Error(), "no peering with paris (peered: milan, venice)") {
		t.Errorf("info peer paris: %v", err)
	}
	if _, err := run(t, "--get", "peerings.9", "--kubeconfig", kc); err == nil || !strings.Contains(err.Error(), "list of 2") {
		t.Errorf("--get past the list: %v", err)
	}
}
