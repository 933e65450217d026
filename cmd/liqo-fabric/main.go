// Command liqo-fabric is the network fabric's node agent (see package
// fabric): one pod per real node, in the node's network namespace
// (hostNetwork, NET_ADMIN), linking the node to the cluster's gateways.
package main

import (
	"fmt"
	"net/netip"
	"os"
	"strings"

	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/fabric"
)

// version is set by `make images` (-ldflags -X main.version=<tag>).
var version = "dev"

func main() {
	os.Exit(run())
}

func run() int {
	fs := pflag.NewFlagSet("liqo-fabric", pflag.ContinueOnError)
	var (
		node        = fs.String("node-name", os.Getenv("NODE_NAME"), "name of the node this agent runs on (default: $NODE_NAME)")
		podCIDRs    = fs.String("pod-cidr", "", "comma-separated pod CIDRs of this cluster: their traffic to peers keeps its source address")
		mtu         = fs.Int("mtu", netv1beta1.DefaultMTU, "MTU of the overlay links to the gateways (the tunnel's)")
		cleanup     = fs.Bool("cleanup", false, "remove every link, route, rule and nftables table of the agent from the node, then exit")
		showVersion = fs.Bool("version", false, "print the version and exit")
	)
	if err := fs.Parse(os.Args[1:]); err != nil {
		if err == pflag.ErrHelp {
			return 0
		}
		return 2
	}
	if *showVersion {
		fmt.Println("liqo-fabric", version)
		return 0
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "liqo-fabric: "+format+"\n", a...)
		return 1
	}
	k := &fabric.Kernel{MTU: *mtu}
	if *cleanup {
		if err := k.Close(); err != nil {
			return fail("cleaning up: %v", err)
		}
		return 0
	}
	for c := range strings.SplitSeq(*podCIDRs, ",") {
		p, err := netip.ParsePrefix(strings.TrimSpace(c))
		if err != nil || !p.Addr().Is4() || p.Masked() != p {
			return fail("--pod-cidr: %q is not an IPv4 network such as 10.244.0.0/16", c)
		}
		k.PodCIDRs = append(k.PodCIDRs, p)
	}
	if *node == "" {
		return fail("--node-name (or $NODE_NAME) is required")
	}
	ctrl.SetLogger(zap.New())
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fail("%v", err)
	}
	if err := fabric.Run(ctrl.SetupSignalHandler(), cfg, *node, k); err != nil {
		return fail("%v", err)
	}
	return 0
}
