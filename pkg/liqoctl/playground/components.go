package playground

import (
	"context"
	"fmt"
	"os"
	"time"

	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/install"
	"github.com/liqo-go/liqo/pkg/testbed"
)

// startControllerManager runs our controller manager for the cluster and
// waits until it holds its lease, so that the cluster is ready to peer when
// it is reported ready. With real nodes the components run in the cluster,
// installed as a user would (installInCluster); on simulated nodes alone,
// which run no container, the manager runs inside this owner process,
// logging to the owner's log.
func startControllerManager(ctx context.Context, c *testbed.Cluster, kubeconfig string, realNodes bool) (done <-chan struct{}, networking bool, err error) {
	if realNodes {
		return installInCluster(ctx, c, kubeconfig)
	}
	log := zap.New(zap.WriteTo(os.Stdout))
	ctrl.SetLogger(log)
	klog.SetLogger(log)
	o := controllermanager.DefaultOptions()
	o.ClusterID = c.Name
	o.ClusterLabels = map[string]string{"liqo.io/playground": "true"}
	o.Logger = log
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		controllermanager.RunLocal(ctx, c.Config, o, func(err error) {
			log.Error(err, "controller manager stopped; restarting it")
		})
	}()

	if err := factory.WaitForComponents(ctx, kubeconfig, consts.DefaultNamespace, time.Minute); err != nil {
		return ch, networking, fmt.Errorf("the liqo controller manager of %s did not start: %w", c.Name, err)
	}
	fmt.Println("playground: liqo controller manager of", c.Name, "is running")
	return ch, networking, nil
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
