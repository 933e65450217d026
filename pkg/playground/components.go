package playground

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/install"
	"github.com/liqo-go/liqo/pkg/testbed"
)

// startControllerManager runs our controller manager for the cluster and
// waits until it holds its lease, so that the cluster is ready to peer when
// it is reported ready. With real nodes the components run in the cluster,
// installed as a user would (installInCluster); on simulated nodes alone,
// which run no container, the liqo-controller-manager binary runs as a
// local process next to the control plane (self-provisioned, restarted if
// it exits), logging to the cluster's logs directory.
func startControllerManager(ctx context.Context, c *testbed.Cluster, kubeconfig string, realNodes bool) (done <-chan struct{}, networking bool, err error) {
	if realNodes {
		return installInCluster(ctx, c, kubeconfig)
	}
	bin, err := managerBinary()
	if err != nil {
		return nil, false, err
	}
	done, err = c.Supervise(ctx, managerName, bin, []string{"--kubeconfig", kubeconfig, "--self-provision",
		"--cluster-id", c.Name, "--cluster-labels", "liqo.io/playground=true",
		// The testbed's API server presents its webhook client certificate,
		// signed by the cluster CA: only it may send admission reviews.
		"--webhook-client-ca", c.CAFile(), "--webhook-client-names", testbed.WebhookClientName}, func(err error) {
		fmt.Println("playground: the liqo controller manager exited; starting it again:", err)
	})
	if err != nil {
		return nil, false, err
	}
	if err := factory.WaitForComponents(ctx, kubeconfig, consts.DefaultNamespace, time.Minute); err != nil {
		return done, false, fmt.Errorf("the liqo controller manager of %s did not start (its log: %s): %w", c.Name, c.LogPath(managerName), err)
	}
	fmt.Println("playground: liqo controller manager of", c.Name, "is running, its log in", c.LogPath(managerName))
	return done, false, nil
}

// managerName is the controller manager's binary and log name.
const managerName = "liqo-controller-manager"

// managerBinary finds the liqo-controller-manager binary next to this
// liqo-playground (where `make liqoctl` puts both), else on PATH: the
// playground does not link the manager itself.
func managerBinary() (string, error) {
	if self, err := os.Executable(); err == nil {
		bin := filepath.Join(filepath.Dir(self), managerName)
		if _, err := os.Stat(bin); err == nil {
			return bin, nil
		}
	}
	bin, err := exec.LookPath(managerName)
	if err != nil {
		return "", fmt.Errorf("simulated-only clusters run the %s binary as a local process, and it is neither next to liqo-playground nor on PATH: "+
			"build both with `make liqoctl` (into bin/), or `go build ./cmd/%s` into a directory on PATH", managerName, managerName)
	}
	return bin, nil
}

// installInCluster publishes the components' images, built from these
// sources, in the cluster's registry and installs them with liqoctl
// install, the network fabric on. done closes with ctx: nothing runs in
// this process.
func installInCluster(ctx context.Context, c *testbed.Cluster, kubeconfig string) (<-chan struct{}, bool, error) {
	fmt.Println("playground: building the components' images for", c.Name)
	pushCtx, cancel := context.WithTimeout(ctx, 15*time.Minute) // a cold build compiles every image
	defer cancel()
	if err := c.PushComponents(pushCtx); err != nil {
		return ctx.Done(), false, fmt.Errorf("publishing the components' images in %s: %w", c.Name, err)
	}
	cmd := install.NewCommand()
	cmd.SetArgs([]string{"generic", "--kubeconfig", kubeconfig, "--cluster-id", c.Name, "--cluster-labels", "liqo.io/playground=true",
		"--pod-cidr", c.Spec.PodCIDR, "--service-cidr", c.Spec.ServiceCIDR,
		// Peers' pods reach the API server on the underlay, not at the
		// kubeconfig's loopback address.
		"--api-server-url", c.UnderlayServer(), "--version", testbed.TestImageTag, "--timeout", "5m",
		// The simulated nodes run no container: the manager, the gateways
		// and consumers' pods go to the real ones.
		"--set", realOnly("controllerManager"), "--set", realOnly("gateway"), "--set", realOnly("offloading")})
	cmd.SetOut(os.Stdout)
	cmd.SetErr(os.Stdout)
	if err := cmd.ExecuteContext(ctx); err != nil {
		return ctx.Done(), false, fmt.Errorf("installing liqo in %s: %w", c.Name, err)
	}
	fmt.Println("playground: liqo installed in", c.Name)
	return ctx.Done(), true, nil
}

// realOnly is a --set pinning the component's pods to the real nodes.
func realOnly(component string) string {
	return component + ".nodeSelector." + testbed.NodeTypeLabel + "=" + testbed.RealNodeType
}
