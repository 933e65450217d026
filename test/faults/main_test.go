//go:build faults

// Package faults injects faults into testbed clusters, by signals to the
// processes the testbed started, and checks what offloaded workloads go
// through: a provider's API server frozen (SIGSTOP) for a minute; the
// consumers partitioned from the provider for longer than the pods'
// not-ready toleration; a consumer's controller manager killed (SIGKILL) in
// the middle of offloading 1,000 pods. It
// prints the figures (time to reconverge, pods lost or duplicated).
package faults

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/inprocess"
)

var (
	rome, milan, naples *testbed.Cluster
	kubeconfigs         = map[string]string{}
	// milanLink is the consumers' way to milan's API server, which milan
	// advertises to them (--api-server-url): a test cuts it to partition
	// them from milan.
	milanLink *link
)

// managerName is the process name of naples' controller manager.
const managerName = "liqo-controller-manager"

// TestMain starts rome and naples (consumers) and milan (the provider),
// each with simulated nodes and its controller manager with the default
// grace; the consumers reach milan's API server through milanLink. Rome's and milan's managers run in this process; naples' is the
// liqo-controller-manager binary, a process of its own that a test can
// SIGKILL, restarted by the testbed's supervisor as a kubelet would restart
// its container.
func TestMain(m *testing.M) {
	testbed.Main(m, func(tb *testbed.Testbed) {
		rome, milan, naples = tb.Cluster("rome"), tb.Cluster("milan"), tb.Cluster("naples")
		dir, err := tb.LogDir("liqo-faults-")
		testbed.Must(tb, err)
		milanLink, err = newLink(milan.Server)
		testbed.Must(tb, err)
		for _, c := range []*testbed.Cluster{rome, milan} {
			m, err := inprocess.Start(context.Background(), c, dir, func(o *controllermanager.Options) error {
				o.HealthCheckInterval = time.Second
				if c == milan {
					o.APIServerURL = milanLink.URL()
				}
				return nil
			})
			testbed.Must(tb, err)
			kubeconfigs[c.Name] = m.Kubeconfig
		}
		testbed.Must(tb, superviseManager(naples, dir))
	},
		testbed.ClusterSpec{Name: "rome", Nodes: []testbed.NodePool{{Prefix: "worker", Count: 1, CPU: "8", Memory: "32Gi", Pods: 110}}},
		// Room for both consumers: rome's default slice (110 pods) and
		// naples' 1,000 pods, within milan's 50% share.
		testbed.ClusterSpec{Name: "milan", Nodes: []testbed.NodePool{{Prefix: "worker", Count: 2, CPU: "64", Memory: "256Gi", Pods: 1200}}},
		testbed.ClusterSpec{Name: "naples", Nodes: []testbed.NodePool{{Prefix: "worker", Count: 1, CPU: "8", Memory: "32Gi", Pods: 110}}},
	)
}

// superviseManager builds the controller manager binary into dir and runs
// it for c under the testbed's supervisor, its log in c's log directory.
func superviseManager(c *testbed.Cluster, dir string) error {
	bin := filepath.Join(dir, managerName)
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/liqo-go/liqo/cmd/"+managerName).CombinedOutput(); err != nil {
		return fmt.Errorf("building %s: %v\n%s", managerName, err, out)
	}
	kubeconfigs[c.Name] = filepath.Join(dir, c.Name+".kubeconfig")
	if err := c.WriteKubeconfig(kubeconfigs[c.Name]); err != nil {
		return err
	}
	_, err := c.Supervise(context.Background(), managerName, bin, []string{"--kubeconfig", kubeconfigs[c.Name], "--self-provision",
		"--cluster-id", c.Name, "--health-check-interval", "1s"}, nil)
	if err != nil {
		return err
	}
	return factory.WaitForComponents(context.Background(), kubeconfigs[c.Name], consts.DefaultNamespace, 2*time.Minute)
}
