package install

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/yaml"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/images"
	"github.com/liqo-go/liqo/pkg/images/catalog"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/realpods"
)

// releaseVersion is the version the test releases: SemVer, as a chart's.
const releaseVersion = "v0.0.1-releasetest"

// TestRelease takes what make release writes and installs it as a user of
// the release would, with none of the sources: liqoctl from its archive
// (listed in SHA256SUMS and the krew manifest), its values for the
// cluster (liqoctl install --only-output-values), the images from the
// release's OCI layout pushed into rome's registry (which containerd asks
// for ghcr.io's images), and the chart's .tgz installed by the Helm SDK's
// install action, as helm install does. The controller manager comes up
// from the release's image.
func TestRelease(t *testing.T) {
	ctx := realpods.Timeout(t, 20*time.Minute)
	dist := filepath.Join(t.TempDir(), "dist")
	// This machine's platform only, for speed: TestBuildsEverywhere
	// (pkg/liqoctl) cross-compiles liqoctl for the others.
	platform := "linux/" + runtime.GOARCH
	mk := exec.CommandContext(ctx, "make", "-C", filepath.Join("..", ".."), "release", "DIST="+dist, "VERSION="+releaseVersion,
		"IMAGE_PLATFORMS="+platform, "RELEASE_PLATFORMS="+platform)
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make release: %v\n%s", err, out)
	}

	archive := "liqoctl-" + releaseVersion + "-linux-" + runtime.GOARCH + ".tar.gz"
	chartFile := "liqo-" + strings.TrimPrefix(releaseVersion, "v") + ".tgz"
	sums := checkSums(t, dist)
	for _, f := range []string{archive, chartFile, "plugin.yaml"} {
		if sums[f] == "" {
			t.Errorf("SHA256SUMS does not list %s: %v", f, sums)
		}
	}
	checkKrewManifest(t, dist, archive, sums[archive])

	bin := t.TempDir()
	liqoctl := extract(t, filepath.Join(dist, archive), bin, "liqoctl")
	if out, err := exec.CommandContext(ctx, liqoctl, "version", "--client").CombinedOutput(); err != nil ||
		!strings.Contains(string(out), releaseVersion) {
		t.Fatalf("the released liqoctl version --client: %v\n%s", err, out)
	}
	valuesFile := filepath.Join(bin, "values.yaml")
	if out, err := exec.CommandContext(ctx, liqoctl, "install", "generic", "--kubeconfig", kubeconfigs[rome.Name], "--cluster-id", rome.Name,
		"--pod-cidr", rome.Spec.PodCIDR, "--service-cidr", rome.Spec.ServiceCIDR, "--api-server-url", rome.UnderlayServer(),
		"--only-output-values", "--dump-values-path", valuesFile).CombinedOutput(); err != nil {
		t.Fatalf("the released liqoctl install --only-output-values: %v\n%s", err, out)
	}

	for _, c := range catalog.All() {
		ref := c.Ref(releaseVersion)
		idx, err := images.ReadLayout(filepath.Join(dist, "images"), ref)
		if err == nil {
			err = images.Push(ctx, rome.RegistryAddr(), ref, idx)
		}
		if err != nil {
			t.Fatalf("publishing %s from the release's layout in rome's registry: %v", ref, err)
		}
	}

	t.Cleanup(func() {
		// The CRDs' cleanup can take minutes on a loaded machine, and the
		// package's next test installs them again.
		ctx, cancel := context.WithTimeout(context.Background(), 7*time.Minute)
		defer cancel()
		if out, err := run(ctx, "uninstall", "--purge", "--kubeconfig", kubeconfigs[rome.Name], "--timeout", "6m"); err != nil {
			t.Errorf("uninstall --purge: %v\n%s", err, out)
		}
	})
	helmInstall(ctx, t, rome, filepath.Join(dist, chartFile), valuesFile)

	pods, err := rome.Client().CoreV1().Pods(consts.DefaultNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=liqo-controller-manager"})
	if err != nil || len(pods.Items) != 1 || !realpods.PodReady(&pods.Items[0]) {
		t.Fatalf("controller manager pods %v (%v); want one, Ready", podSummary(pods), err)
	}
	if img := pods.Items[0].Spec.Containers[0].Image; img != catalog.Repository+"/"+catalog.ControllerManager+":"+releaseVersion {
		t.Errorf("the controller manager runs %s, want the release's image", img)
	}
}

// helmInstall installs the chart archive with the values file as helm
// install -n liqo --create-namespace --wait -f values liqo chart does,
// with the Helm SDK alone.
func helmInstall(ctx context.Context, t *testing.T, c *testbed.Cluster, chartPath, valuesFile string) {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	path, ns := kubeconfigs[c.Name], consts.DefaultNamespace
	flags.KubeConfig, flags.Namespace = &path, &ns
	cfg := &action.Configuration{}
	if err := cfg.Init(flags, ns, "secret", t.Logf); err != nil {
		t.Fatal(err)
	}
	ch, err := loader.Load(chartPath)
	if err != nil {
		t.Fatalf("loading %s: %v", chartPath, err)
	}
	vals, err := chartutil.ReadValuesFile(valuesFile)
	if err != nil {
		t.Fatal(err)
	}
	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace, in.CreateNamespace = "liqo", ns, true
	in.Wait, in.Timeout = true, 5*time.Minute
	if _, err := in.RunWithContext(ctx, ch, vals.AsMap()); err != nil {
		t.Fatalf("%s: helm install of %s: %v", c.Name, filepath.Base(chartPath), err)
	}
}

// checkSums checks every line of the release's SHA256SUMS against the
// file it names, and returns the sums by file name.
func checkSums(t *testing.T, dist string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("SHA256SUMS: %q is not a sha256sum line", line)
		}
		if got := sha256Of(t, filepath.Join(dist, name)); got != sum {
			t.Errorf("SHA256SUMS says %s for %s, which has %s", sum, name, got)
		}
		sums[name] = sum
	}
	return sums
}

// checkKrewManifest checks the krew manifest points at the archive, with
// its sha256, by the release's URL pattern.
func checkKrewManifest(t *testing.T, dist, archive, sum string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dist, "plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Version   string `json:"version"`
			Platforms []struct {
				Selector struct {
					MatchLabels map[string]string `json:"matchLabels"`
				} `json:"selector"`
				URI    string `json:"uri"`
				Sha256 string `json:"sha256"`
				Bin    string `json:"bin"`
			} `json:"platforms"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatalf("plugin.yaml: %v", err)
	}
	wantURI := "https://github.com/liqo-go/liqo/releases/download/" + releaseVersion + "/" + archive
	if m.Kind != "Plugin" || m.Metadata.Name != "liqo" || m.Spec.Version != releaseVersion || len(m.Spec.Platforms) != 1 ||
		m.Spec.Platforms[0].URI != wantURI || m.Spec.Platforms[0].Sha256 != sum || m.Spec.Platforms[0].Bin != "liqoctl" ||
		m.Spec.Platforms[0].Selector.MatchLabels["os"] != "linux" || m.Spec.Platforms[0].Selector.MatchLabels["arch"] != runtime.GOARCH {
		t.Errorf("plugin.yaml: want plugin liqo %s with one platform, linux/%s at %s with sha256 %s; got:\n%s",
			releaseVersion, runtime.GOARCH, wantURI, sum, data)
	}
}

// extract writes the file name of the tar.gz archive into dir and returns
// its path.
func extract(t *testing.T, archive, dir, name string) string {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if err != nil {
			t.Fatalf("%s has no %s: %v", archive, name, err)
		}
		if hdr.Name != name {
			continue
		}
		path := filepath.Join(dir, name)
		out, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, os.FileMode(hdr.Mode))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, tr); err != nil {
			t.Fatal(err)
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
}

func sha256Of(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
