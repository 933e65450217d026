package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/liqo-go/liqo/pkg/proc"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/pkg/testbed/netns"
)

// TestPlayground runs `liqoctl playground up` (which runs the
// liqo-playground beside liqoctl: two simulated nodes and one real node
// per cluster, peered with the network fabric), uses both
// clusters with kubectl, then `down`, and
// checks that no process, network namespace, mount or cgroup of the
// playground is left.
func TestPlayground(t *testing.T) {
	liqoctl := buildLiqoctl(t)
	dir := t.TempDir()
	run := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute) // up builds the fabric's images
		defer cancel()
		cmd := exec.CommandContext(ctx, liqoctl, append([]string{"playground", "--dir", dir}, args...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	t.Cleanup(func() { _, _ = run("down") }) // whatever happens below

	out, err := run("up", "--clusters", "rome,milan")
	if err != nil {
		t.Fatalf("playground up: %v\n%s", err, out)
	}
	if !strings.Contains(out, "The playground is ready: 2 cluster(s)") {
		t.Errorf("up did not report two ready clusters:\n%s", out)
	}
	// up ends with rome peered to milan and shows the virtual node.
	for _, want := range []string{"Peering rome (consumer) with milan (provider)", "INFO: Virtual node milan is Ready",
		"get nodes", "milan      Ready    virtual-node"} {
		if !strings.Contains(out, want) {
			t.Errorf("up output lacks %q:\n%s", want, out)
		}
	}
	// It then offloads liqo-demo and shows a demo replica Running on milan,
	// and one on the real node.
	if !strings.Contains(out, "namespace liqo-demo offloaded, twin namespace liqo-demo-rome") ||
		!regexp.MustCompile(`(?m)^demo-\S+\s+1/1\s+Running\s.*\smilan\s`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^demo-\S+\s+1/1\s+Running\s.*\sreal-0\s`).MatchString(out) {
		t.Errorf("up output lacks the offloaded liqo-demo with a demo pod Running on milan and one on real-0:\n%s", out)
	}
	// With real nodes the clusters are peered with the network fabric: the
	// replica on rome's real node fetches the page of the one on milan.
	if !strings.Contains(out, "Tunnel connected on both sides") ||
		!regexp.MustCompile(`(?m)^demo-\S+\n\(answered by demo-\S+, running in the provider, through the network fabric\)`).MatchString(out) {
		t.Errorf("up output lacks the network fabric's tunnel and a page fetched across it:\n%s", out)
	}

	// Every component runs under an owner process, recorded in its state file.
	owners := ownerPIDs(t, dir, "rome", "milan")
	var all []int
	for _, pid := range owners {
		all = append(all, pid)
		all = append(all, proc.Children(pid)...)
	}
	if len(all) < 2*6 {
		t.Errorf("found %d playground processes, want at least 12 (2 owners with 5 components each)", len(all))
	}

	kubectl := filepath.Join(dir, "bin", "kubectl")
	for _, name := range []string{"rome", "milan"} {
		kubeconfig := filepath.Join(dir, name+".kubeconfig")
		got, err := exec.Command(kubectl, "--kubeconfig", kubeconfig, "get", "nodes", "--no-headers").CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl get nodes on %s: %v\n%s", name, err, got)
		}
		want := 3 // two simulated workers and a real node
		if name == "rome" {
			want = 4 // and the virtual node for milan
		}
		if n := strings.Count(string(got), " Ready "); n != want {
			t.Errorf("%s: %d Ready nodes, want %d:\n%s", name, n, want, got)
		}
		ver, err := exec.Command(kubectl, "--kubeconfig", kubeconfig, "version").CombinedOutput()
		if err != nil || !strings.Contains(string(ver), "Server Version: v1.34") {
			t.Errorf("%s: kubectl version: %v\n%s", name, err, ver)
		}
	}

	offloadedTop(t, kubectl, filepath.Join(dir, "rome.kubeconfig"))

	status, err := run("status")
	if err != nil || strings.Count(status, "Ready") < 2 || !strings.Contains(status, "3/3") || !strings.Contains(status, "1 real, 2 simulated, 1 virtual") {
		t.Errorf("status: %v\n%s", err, status)
	}

	if out, err := run("down", "--clusters", "naples"); err == nil || !strings.Contains(out, `unknown cluster "naples"`) {
		t.Errorf("down of an unknown cluster: err=%v\n%s", err, out)
	}

	if out, err := run("down"); err != nil {
		t.Fatalf("playground down: %v\n%s", err, out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range all {
		for proc.Alive(pid) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if proc.Alive(pid) {
			t.Errorf("process %d is still alive after down", pid)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("down left %d files behind in %s, the first %s", len(left), dir, left[0].Name())
	}
	// The real nodes' network namespaces (and the underlay), cgroups and
	// mounts are gone too.
	if left := netns.List("lqtb-" + testbed.UnderlayNameFor(dir)); len(left) != 0 {
		t.Errorf("down left network namespaces: %v", left)
	}
	if _, err := os.Stat("/sys/fs/cgroup/memory/liqo-testbed/" + testbed.UnderlayNameFor(dir)); !os.IsNotExist(err) {
		t.Errorf("down left the real nodes' cgroups (%v)", err)
	}
	if mounts, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(mounts), dir) {
		t.Errorf("down left mounts under %s", dir)
	}
}

// offloadedTop: on rome, kubectl top shows the demo replica running on
// milan (milan's measure of it, through the virtual node's kubelet API and
// rome's metrics-server) and the virtual node milan.
func offloadedTop(t *testing.T, kubectl, kubeconfig string) {
	t.Helper()
	out, err := exec.Command(kubectl, "--kubeconfig", kubeconfig, "get", "pods", "-n", "liqo-demo",
		"--field-selector", "spec.nodeName=milan", "-o", "name").CombinedOutput()
	pod := strings.TrimPrefix(strings.TrimSpace(string(out)), "pod/")
	if err != nil || pod == "" || strings.Contains(pod, "\n") {
		t.Fatalf("the demo replica on milan: %v\n%s", err, out)
	}
	// Each side's metrics-server needs two scrapes, 15 s apart (a fresh
	// container's first one may do).
	for _, args := range [][]string{{"pod", "-n", "liqo-demo", pod}, {"node", "milan"}} {
		var top []byte
		ok := func() bool {
			return err == nil && strings.HasPrefix(string(top), args[len(args)-1]+" ") && !strings.Contains(string(top), "<unknown>")
		}
		for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Second) {
			top, err = exec.Command(kubectl, append(append([]string{"--kubeconfig", kubeconfig, "top"}, args...), "--no-headers")...).CombinedOutput()
			if ok() {
				break
			}
		}
		if !ok() {
			t.Errorf("kubectl top %s: %v\n%s", strings.Join(args, " "), err, top)
		}
	}
}

// buildLiqoctl builds liqoctl and the liqo-playground it runs into one
// directory, as make liqoctl does, and returns liqoctl's path.
func buildLiqoctl(t *testing.T) string {
	t.Helper()
	return build(t, t.TempDir(), "liqoctl", "liqo-playground")["liqoctl"]
}

// build builds the commands of cmd/ named into dir and returns their paths.
func build(t *testing.T, dir string, commands ...string) map[string]string {
	t.Helper()
	paths := map[string]string{}
	for _, c := range commands {
		paths[c] = filepath.Join(dir, c)
		if out, err := exec.Command("go", "build", "-o", paths[c], "github.com/liqo-go/liqo/cmd/"+c).CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v\n%s", c, err, out)
		}
	}
	return paths
}

func ownerPIDs(t *testing.T, dir string, names ...string) []int {
	t.Helper()
	var pids []int
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(dir, name+".state.json"))
		if err != nil {
			t.Fatalf("state of %s: %v", name, err)
		}
		i := strings.Index(string(data), `"pid": `)
		if i < 0 {
			t.Fatalf("no pid in the state of %s: %s", name, data)
		}
		rest := string(data[i+len(`"pid": `):])
		pid, err := strconv.Atoi(rest[:strings.IndexAny(rest, ",\n")])
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	return pids
}

// TestRealNodesNeedRoot runs `playground up --real-nodes 1` as an
// unprivileged user: it fails at once, saying that real nodes need root and
// how to run without them, before building or starting anything.
func TestRealNodesNeedRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test switches to an unprivileged user and so must start as root (CI does)")
	}
	dir, err := os.MkdirTemp("", "liqo-noroot-")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	liqoctl := build(t, dir, "liqoctl", "liqo-playground")["liqoctl"]
	cmd := exec.Command(liqoctl, "playground", "up", "--dir", filepath.Join(dir, "pg"), "--real-nodes", "1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.Env = append(os.Environ(), "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "real nodes need root") || !strings.Contains(string(out), "--real-nodes 0") {
		t.Errorf("up --real-nodes 1 without root: err=%v, want an error saying real nodes need root and how to do without:\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "pg", "rome.state.json")); err == nil {
		t.Errorf("up without root started a cluster anyway")
	}
}
