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
)

// startControllerManager runs our controller manager for the cluster inside
// this owner process (there is no container runtime to run it in-cluster),
// logging to the owner's log, and waits until it holds its lease so that the
// cluster is ready to peer when it is reported ready.
func startControllerManager(ctx context.Context, c *testbed.Cluster, kubeconfig string) (<-chan struct{}, error) {
	log := zap.New(zap.WriteTo(os.Stdout))
	ctrl.SetLogger(log)
	klog.SetLogger(log)
	o := controllermanager.DefaultOptions()
	o.ClusterID = c.Name
	o.ClusterLabels = map[string]string{"liqo.io/playground": "true"}
	o.Logger = log
	done := make(chan struct{})
	go func() {
		defer close(done)
		controllermanager.RunLocal(ctx, c.Config, o, func(err error) {
			log.Error(err, "controller manager stopped; restarting it")
		})
	}()

	if err := factory.WaitForComponents(ctx, kubeconfig, consts.DefaultNamespace, time.Minute); err != nil {
		return done, fmt.Errorf("the liqo controller manager of %s did not start: %w", c.Name, err)
	}
	fmt.Println("playground: liqo controller manager of", c.Name, "is running")
	return done, nil
}
