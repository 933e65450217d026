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
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/pkg/testbed/fabricopts"
)

// startControllerManager runs our controller manager for the cluster inside
// this owner process, logging to the owner's log, and waits until it holds
// its lease so that the cluster is ready to peer when it is reported ready.
// With real nodes it also publishes the network fabric's images (gateway,
// node agent) in the cluster's registry, built from these sources, and
// turns the fabric on; networking says whether it did.
func startControllerManager(ctx context.Context, c *testbed.Cluster, kubeconfig string, realNodes bool) (done <-chan struct{}, networking bool, err error) {
	log := zap.New(zap.WriteTo(os.Stdout))
	ctrl.SetLogger(log)
	klog.SetLogger(log)
	o := controllermanager.DefaultOptions()
	o.ClusterID = c.Name
	o.ClusterLabels = map[string]string{"liqo.io/playground": "true"}
	o.Logger = log
	if realNodes {
		networking = enableNetworking(ctx, c, &o)
	}
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

// enableNetworking turns the network fabric on (fabricopts.Enable). A
// failure (sources not at hand to build from, say) leaves the playground
// without networking, said in the log, rather than failing it.
func enableNetworking(ctx context.Context, c *testbed.Cluster, o *controllermanager.Options) bool {
	pushCtx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	fmt.Println("playground: building the network fabric's images for", c.Name)
	if err := fabricopts.Enable(pushCtx, c, o); err != nil {
		fmt.Println("playground: no network fabric in", c.Name+":", err)
		return false
	}
	return true
}
