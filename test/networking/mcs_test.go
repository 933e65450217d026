//go:build conformance

package networking

import (
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
	"github.com/liqo-go/liqo/test/mcsconformance"
	"github.com/liqo-go/liqo/test/realpods"
)

// oslo's pods are in a CIDR of their own: the run on a flat network.
var oslo *testbed.Cluster

const osloPodCIDR = "10.245.0.0/16"

func init() {
	extraClusters = append(extraClusters, testbed.ClusterSpec{Name: "oslo", RealNodes: 1, Nodes: []testbed.NodePool{{Count: 0}}, PodCIDR: osloPodCIDR})
}

// TestMCSConformance runs the upstream Multi-Cluster Services conformance
// suite, unmodified: on rome and oslo, whose pod CIDRs differ; on rome and
// milan, whose pod CIDRs are the same; then on rome, milan and paris, all
// three with the same pod CIDR. The first cluster exports, the others
// import (and export in the tests of conflicts). A cluster imports the
// exports of its direct peers only, so the clusterset the suite expects
// is a full mesh: rome consumes milan and paris, and milan consumes paris.
// Every test of the report, Required and Optional, must pass, but one
// where the pod CIDRs overlap (remappedHeadless); the reports are kept in
// _output/mcs-conformance (see mcsconformance.ReportDir).
func TestMCSConformance(t *testing.T) {
	ctx := realpods.Timeout(t, 75*time.Minute)
	oslo = clusters["oslo"]
	suite, err := mcsconformance.SuiteDir()
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	buildLog := &strings.Builder{}
	bin, err := mcsconformance.Build(ctx, suite, work, buildLog)
	if err != nil {
		t.Fatalf("building the suite: %v\n%s", err, buildLog)
	}
	kubeconfig := clustersetKubeconfig(t, rome, milan, paris, oslo)

	// A flat network: oslo's pods are reached at their own addresses.
	peer(ctx, t, "rome", "oslo")
	t.Cleanup(func() { unpeer(t, "rome", "oslo") })
	runSuite(ctx, t, bin, kubeconfig, "rome", "oslo")

	// The same pod CIDR. The other tests know rome as milan's consumer
	// only: the other peerings end with the test.
	peer(ctx, t, "rome", "milan")
	t.Run("headless-remapped", headlessRemapped)
	runSuite(ctx, t, bin, kubeconfig, "rome", "milan")
	peer(ctx, t, "rome", "paris")
	t.Cleanup(func() { unpeer(t, "rome", "paris") })
	peer(ctx, t, "milan", "paris")
	t.Cleanup(func() { unpeer(t, "milan", "paris") })
	runSuite(ctx, t, bin, kubeconfig, "rome", "milan", "paris")
}

// remappedHeadless is the one test of the suite that no cluster of a
// clusterset with overlapping pod CIDRs can pass: it wants every cluster's
// DNS to answer a headless Service's name with the addresses its pods have
// in the exporting cluster. Where those addresses are also the importing
// cluster's own pods', answering them would send the clients to the wrong
// pods: the import answers the addresses it reaches the exporter's pods
// at, as headlessRemapped checks.
const remappedHeadless = "A DNS query of the <service>.<ns>.svc.clusterset.local domain for a headless service should return the ready endpoint addresses of all the backing pods"

// runSuite runs the suite with contexts, the exporting cluster first, and
// wants every test passed, but for remappedHeadless where the clusters'
// pod CIDRs overlap.
func runSuite(ctx context.Context, t *testing.T, bin, kubeconfig string, contexts ...string) {
	name := strings.Join(contexts, "-")
	overlapping := !slices.Contains(contexts, "oslo")
	t.Run(name, func(t *testing.T) {
		dir, err := mcsconformance.ReportDir(name)
		if err != nil {
			t.Fatal(err)
		}
		report, err := mcsconformance.Run(ctx, bin, mcsconformance.Options{
			Kubeconfig: kubeconfig, Contexts: contexts, ReportDir: dir, Timeout: 30 * time.Minute,
		}, io.Discard)
		if report == nil {
			t.Fatalf("%v", err)
		}
		t.Logf("%s: %d of %d passed (report in %s)", name, report.Passed, report.Total, dir)
		if report.SuiteFailure != "" {
			t.Errorf("suite failure: %s", report.SuiteFailure)
		}
		want := report.Total
		for _, test := range report.NotPassedTests() {
			if overlapping && test.Desc == remappedHeadless {
				want--
				t.Logf("not passed, as expected with overlapping pod CIDRs: %s", test.Desc)
				continue
			}
			t.Errorf("not passed: %s%s", test.Desc, test.Message)
		}
		if report.Total == 0 || report.Passed != want {
			t.Errorf("%d of %d passed, want %d", report.Passed, report.Total, want)
		}
		if err != nil && report.Passed != want {
			t.Errorf("%v", err)
		}
	})
}

// headlessRemapped: rome exports a headless Service; milan, whose pods
// have the same CIDR, resolves its clusterset name to the addresses it
// reaches rome's pods at, and each pod's own name in its cluster
// (<address with dashes>.rome.<service>...) to the same remapped address.
func headlessRemapped(t *testing.T) {
	ctx := realpods.Timeout(t, 5*time.Minute)
	ns := realpods.Namespace(ctx, t, rome, "mcs-headless")
	if _, err := realpods.Kubectl(ctx, milan, "create", "namespace", ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = realpods.Kubectl(context.Background(), milan, "delete", "namespace", ns, "--wait=false")
	})
	realpods.DeployWeb(ctx, t, rome, ns, 2, 0)
	for _, manifest := range []string{
		`{"apiVersion":"v1","kind":"Service","metadata":{"name":"hello","namespace":"` + ns + `"},"spec":{"clusterIP":"None","selector":{"app":"web"},"ports":[{"port":8080}]}}`,
		`{"apiVersion":"multicluster.x-k8s.io/v1beta1","kind":"ServiceExport","metadata":{"name":"hello","namespace":"` + ns + `"}}`,
	} {
		if out, err := kubectlStdin(ctx, rome, manifest, "apply", "-f", "-"); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
	pods := realpods.RunningPods(ctx, t, rome, ns, "app=web", 2)
	var want []string
	for _, p := range pods {
		want = append(want, remapped(ctx, t, milan, "rome", p.Status.PodIP))
	}
	slices.Sort(want)
	client := realpods.Client(ctx, t, milan, ns, "")
	name := "hello." + ns + ".svc.clusterset.local"
	harness.Eventually(ctx, t, name+" answered in milan with "+strings.Join(want, ","), func() (bool, error) {
		got, err := lookup(ctx, milan, ns, client, name)
		return slices.Equal(got, want), err
	})
	first := strings.ReplaceAll(pods[0].Status.PodIP, ".", "-") + ".rome." + name
	at := remapped(ctx, t, milan, "rome", pods[0].Status.PodIP)
	harness.Eventually(ctx, t, first+" answered in milan with "+at, func() (bool, error) {
		got, err := lookup(ctx, milan, ns, client, first)
		return slices.Equal(got, []string{at}), err
	})
}

// lookup resolves name with busybox's nslookup in pod and returns the
// answer's addresses, sorted (none while the name is unknown).
func lookup(ctx context.Context, c *testbed.Cluster, ns, pod, name string) ([]string, error) {
	out, err := realpods.Kubectl(ctx, c, "exec", "-n", ns, pod, "--", "nslookup", name)
	if err != nil && !strings.Contains(out, "NXDOMAIN") && !strings.Contains(out, "can't find") {
		return nil, err
	}
	var addrs []string
	answer := false
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "Name:") {
			answer = true
		}
		if a, ok := strings.CutPrefix(line, "Address:"); ok && answer {
			addrs = append(addrs, strings.TrimSpace(a))
		}
	}
	slices.Sort(addrs)
	return addrs, nil
}

// kubectlStdin runs kubectl in c with input on its standard input.
func kubectlStdin(ctx context.Context, c *testbed.Cluster, input string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, c.KubectlPath(), append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(input)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// peer makes consumer a consumer of provider, with the network fabric.
func peer(ctx context.Context, t *testing.T, consumer, provider string) {
	t.Helper()
	if out, err := liqoctlRun(ctx, "peer", "--kubeconfig", kubeconfigs[consumer], "--remote-kubeconfig", kubeconfigs[provider],
		"--server-service-type", "NodePort", "--timeout", "5m"); err != nil {
		t.Fatalf("peer %s -> %s: %v\n%s", consumer, provider, err, out)
	}
}

// unpeer ends the peering of consumer with provider and what it offloaded.
func unpeer(t *testing.T, consumer, provider string) {
	t.Helper()
	if out, err := liqoctlRun(context.Background(), "unpeer", "--kubeconfig", kubeconfigs[consumer], "--remote-kubeconfig", kubeconfigs[provider], "--delete-namespaces"); err != nil {
		t.Errorf("unpeer %s -> %s: %v\n%s", consumer, provider, err, out)
	}
}

// clustersetKubeconfig is one kubeconfig with a context named after each
// cluster.
func clustersetKubeconfig(t *testing.T, clusters ...*testbed.Cluster) string {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for _, c := range clusters {
		f := filepath.Join(dir, c.Name+".kubeconfig")
		if err := c.WriteKubeconfig(f); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	out := filepath.Join(dir, "clusterset.kubeconfig")
	if err := mcsconformance.MergeKubeconfigs(out, files...); err != nil {
		t.Fatal(err)
	}
	return out
}
