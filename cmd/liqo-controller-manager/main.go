// Command liqo-controller-manager runs the consumer- and provider-side
// controllers of one cluster, in the cluster or as a local process given a
// kubeconfig.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/liqo-go/liqo/deploy/charts/liqo/crds"
	"github.com/liqo-go/liqo/pkg/controllermanager"
)

// version is set by `make images` (-ldflags -X main.version=<tag>).
var version = "dev"

func main() {
	o := controllermanager.DefaultOptions()
	o.Gateway.Image = controllermanager.DefaultGatewayImage + ":" + version
	o.Fabric.Image = controllermanager.DefaultFabricImage + ":" + version
	fs := pflag.NewFlagSet("liqo-controller-manager", pflag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the cluster (default: in-cluster config, then $KUBECONFIG)")
	printVersion := fs.Bool("version", false, "print the version and exit")
	o.AddFlags(fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		if err == pflag.ErrHelp {
			return
		}
		os.Exit(2)
	}
	if *printVersion {
		fmt.Println("liqo-controller-manager", version)
		return
	}
	log := zap.New()
	ctrl.SetLogger(log)
	o.Logger = log
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = *kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, nil).ClientConfig()
	if *kubeconfig == "" {
		cfg, err = ctrl.GetConfig()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "liqo-controller-manager: loading the kubeconfig:", err)
		os.Exit(1)
	}
	ctx := ctrl.SetupSignalHandler()
	if o.SelfProvision {
		// No chart installed the CRDs of a bare cluster.
		if err := crds.Install(ctx, cfg); err != nil {
			fmt.Fprintln(os.Stderr, "liqo-controller-manager: applying the CRDs (--self-provision):", err)
			os.Exit(1)
		}
	}
	if err := controllermanager.Run(ctx, cfg, o); err != nil {
		fmt.Fprintln(os.Stderr, "liqo-controller-manager:", err)
		os.Exit(1)
	}
}
