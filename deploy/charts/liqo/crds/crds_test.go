package crds_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/liqo-go/liqo/deploy/charts/liqo/crds"
	"github.com/liqo-go/liqo/pkg/testbed"
)

var (
	cluster *testbed.Cluster
	// apiConfig reaches the API server: cluster's, or in a fuzzing worker
	// the coordinator's.
	apiConfig *rest.Config
)

// fuzzKubeconfigEnv names the kubeconfig of the coordinator's cluster to
// the fuzzing workers, which go test starts as child processes running
// TestMain again: they use that cluster rather than start one each.
const fuzzKubeconfigEnv = "LIQO_CRDS_FUZZ_KUBECONFIG"

func TestMain(m *testing.M) {
	flag.Parse()
	if flag.Lookup("test.list").Value.String() != "" {
		os.Exit(m.Run()) // listing the tests (hack/fuzz.sh does) needs no cluster
	}
	if kubeconfig := os.Getenv(fuzzKubeconfigEnv); kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			fmt.Fprintln(os.Stderr, "the coordinator's kubeconfig:", err)
			os.Exit(1)
		}
		apiConfig = cfg
		os.Exit(m.Run())
	}
	testbed.Main(m, func(tb *testbed.Testbed) {
		cluster, apiConfig = tb.Clusters[0], tb.Clusters[0].Config
		kubeconfig := filepath.Join(cluster.Dir, "fuzz.kubeconfig")
		testbed.Must(tb, cluster.WriteKubeconfig(kubeconfig))
		testbed.Must(tb, os.Setenv(fuzzKubeconfigEnv, kubeconfig))
	}, testbed.ClusterSpec{Name: "crds"})
}

func TestInstallIsIdempotent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for range 2 {
		if err := crds.Install(ctx, cluster.Config); err != nil {
			t.Fatal(err)
		}
	}
	all, err := crds.All()
	if err != nil || len(all) == 0 {
		t.Fatalf("embedded CRDs: %d, %v", len(all), err)
	}
}

// TestInstallUpdatesAnOlderCRD: a CRD installed by an older build, one
// optional field short, gets it back, through server-side apply.
func TestInstallUpdatesAnOlderCRD(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := crds.Install(ctx, cluster.Config); err != nil {
		t.Fatal(err)
	}
	cs, err := apiextensionsclient.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	api := cs.ApiextensionsV1().CustomResourceDefinitions()
	const name, field = "virtualnodes.offloading.liqo.io", "loadBalancerClasses"
	crd, err := api.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	delete(crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties, field)
	if _, err := api.Update(ctx, crd, metav1.UpdateOptions{FieldManager: "older-build"}); err != nil {
		t.Fatal(err)
	}
	if err := crds.Install(ctx, cluster.Config); err != nil {
		t.Fatal(err)
	}
	crd, err = api.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties[field]; !ok {
		t.Errorf("after Install, the CRD still lacks spec.%s", field)
	}
	applied := false
	for _, m := range crd.ManagedFields {
		applied = applied || (m.Manager == crds.FieldManager && m.Operation == metav1.ManagedFieldsOperationApply)
	}
	if !applied {
		t.Errorf("no server-side apply by %q in the CRD's managed fields: %+v", crds.FieldManager, crd.ManagedFields)
	}
}

// kubectl runs the testbed's kubectl against the cluster, as users do.
func kubectl(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(cluster.KubectlPath(), append([]string{"--kubeconfig", cluster.Kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// seedOffloading is the NamespaceOffloading manifest of the seed documents.
const seedOffloading = `apiVersion: offloading.liqo.io/v1beta1
kind: NamespaceOffloading
metadata:
  name: offloading
  namespace: default
spec:
  namespaceMappingStrategy: DefaultName
  podOffloadingStrategy: LocalAndRemote
  clusterSelector:
    nodeSelectorTerms: []
`

func TestNamespaceOffloadingValidation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := crds.Install(ctx, cluster.Config); err != nil {
		t.Fatal(err)
	}
	if out, err := kubectl(t, seedOffloading, "apply", "-f", "-"); err != nil {
		t.Fatalf("applying the seed manifest: %v\n%s", err, out)
	}
	out, err := kubectl(t, "", "get", "namespaceoffloading", "-n", "default")
	if err != nil || !strings.Contains(out, "NAMESPACEMAPPINGSTRATEGY") || !strings.Contains(out, "LocalAndRemote") {
		t.Errorf("kubectl get namespaceoffloading: %v\n%s", err, out)
	}

	cases := []struct {
		name, manifest, want string
	}{
		{"wrong name", strings.Replace(seedOffloading, "name: offloading", "name: other", 1), "must be named 'offloading'"},
		{"immutable mapping strategy", strings.Replace(seedOffloading, "namespaceMappingStrategy: DefaultName", "namespaceMappingStrategy: EnforceSameName", 1), "namespaceMappingStrategy is immutable"},
		{"unknown strategy", strings.Replace(seedOffloading, "LocalAndRemote", "Everywhere", 1), "Unsupported value"},
		{"selected name missing", strings.Replace(strings.Replace(seedOffloading, "namespace: default", "namespace: kube-public", 1), "DefaultName", "SelectedName", 1), "remoteNamespaceName is required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := kubectl(t, tc.manifest, "apply", "-f", "-")
			if err == nil || !strings.Contains(out, tc.want) {
				t.Errorf("got err=%v, want a rejection containing %q:\n%s", err, tc.want, out)
			}
		})
	}

	// Omitted fields take the documented defaults.
	minimal := "apiVersion: offloading.liqo.io/v1beta1\nkind: NamespaceOffloading\nmetadata:\n  name: offloading\n  namespace: kube-system\n"
	if out, err := kubectl(t, minimal, "apply", "-f", "-"); err != nil {
		t.Fatalf("applying a minimal NamespaceOffloading: %v\n%s", err, out)
	}
	out, err = kubectl(t, "", "get", "namespaceoffloading", "offloading", "-n", "kube-system",
		"-o", "jsonpath={.spec.namespaceMappingStrategy}/{.spec.podOffloadingStrategy}")
	if err != nil || out != "DefaultName/LocalAndRemote" {
		t.Errorf("defaults: got %q (%v), want DefaultName/LocalAndRemote", out, err)
	}
}

// TestRefusesDroppingAStoredVersion: an update whose CRD no longer has a
// version objects are stored in is refused, naming it.
func TestRefusesDroppingAStoredVersion(t *testing.T) {
	all, err := crds.All()
	if err != nil {
		t.Fatal(err)
	}
	existing := all[0].DeepCopy()
	existing.Status.StoredVersions = []string{"v1alpha0", existing.Spec.Versions[0].Name}
	err = crds.KeepsStoredVersions(existing, all[0])
	if err == nil || !strings.Contains(err.Error(), "stored as v1alpha0") {
		t.Fatalf("dropping a stored version: %v", err)
	}
	existing.Status.StoredVersions = existing.Status.StoredVersions[1:]
	if err := crds.KeepsStoredVersions(existing, all[0]); err != nil {
		t.Fatalf("keeping the stored version: %v", err)
	}
}
