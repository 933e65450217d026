// Command liqo-gateway is the network fabric's gateway pod: one end of the
// WireGuard tunnel of a peering (see package gateway). Its controller
// (GatewayServer/GatewayClient) writes its flags; it runs in its own pod
// network namespace, with the capabilities to administer that namespace's
// network and nothing else.
package main

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/liqo-go/liqo/pkg/gateway"
)

// version is set by `make images` (-ldflags -X main.version=<tag>).
var version = "dev"

func main() {
	os.Exit(run())
}

func run() int {
	fs := pflag.NewFlagSet("liqo-gateway", pflag.ContinueOnError)
	var (
		mode        = fs.String("mode", "", "side of the tunnel: server (listens) or client (dials the server)")
		name        = fs.String("name", "", "name of the GatewayServer or GatewayClient this pod serves")
		namespace   = fs.String("namespace", os.Getenv("POD_NAMESPACE"), "its namespace (the peer's tenant namespace)")
		remote      = fs.String("remote-cluster-id", "", "cluster ID of the peer")
		mtu         = fs.Int("mtu", 1340, "MTU of the tunnel")
		keysDir     = fs.String("keys-dir", "/etc/liqo/wireguard", "directory holding the privateKey file of the gateway's key Secret")
		healthPort  = fs.Int("health-port", 8080, "port of the /readyz endpoint")
		metricsAddr = fs.String("metrics-address", "0", "listen address of the metrics endpoint, served over HTTPS to callers allowed to get /metrics (0 disables it)")
		listenPort  = fs.Int("listen-port", 51840, "UDP port a server listens on")
		addresses   = fs.String("endpoint-addresses", "", "comma-separated addresses of the server, for a client (the first one is dialled)")
		port        = fs.Int("endpoint-port", 0, "UDP port of the server, for a client")
		podIP       = fs.String("pod-ip", os.Getenv("POD_IP"), "the gateway pod's address, behind which nodes' traffic enters the tunnel")
		podName     = fs.String("pod-name", os.Getenv("POD_NAME"), "the gateway pod's name: the replica holding the gateway's Lease labels it active")
		showVersion = fs.Bool("version", false, "print the version and exit")
	)
	if err := fs.Parse(os.Args[1:]); err != nil {
		if err == pflag.ErrHelp {
			return 0
		}
		return 2
	}
	if *showVersion {
		fmt.Println("liqo-gateway", version)
		return 0
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "liqo-gateway: "+format+"\n", a...)
		return 1
	}
	cfg := gateway.Config{Mode: gateway.Mode(*mode), Name: *name, Namespace: *namespace, RemoteClusterID: *remote,
		MTU: *mtu, HealthPort: *healthPort, MetricsAddr: *metricsAddr, PodName: *podName}
	if *podIP != "" {
		self, err := netip.ParseAddr(*podIP)
		if err != nil || !self.Is4() {
			return fail("--pod-ip %q is not an IPv4 address", *podIP)
		}
		cfg.Self = self
	}
	k := &gateway.Kernel{Mode: cfg.Mode, ListenPort: *listenPort, MTU: *mtu}
	switch cfg.Mode {
	case gateway.Server:
		cfg.Kind, cfg.Local, cfg.Peer = "GatewayServer", gateway.ServerTunnelAddress.Addr().AsSlice(), gateway.ClientTunnelAddress.Addr().AsSlice()
	case gateway.Client:
		cfg.Kind, cfg.Local, cfg.Peer = "GatewayClient", gateway.ClientTunnelAddress.Addr().AsSlice(), gateway.ServerTunnelAddress.Addr().AsSlice()
		first, _, _ := strings.Cut(*addresses, ",")
		if first == "" || *port <= 0 || *port > 65535 {
			return fail("a client needs --endpoint-addresses and --endpoint-port")
		}
		k.Endpoint = net.JoinHostPort(first, strconv.Itoa(*port))
	default:
		return fail("--mode must be server or client, not %q", *mode)
	}
	if cfg.Name == "" || cfg.Namespace == "" || cfg.RemoteClusterID == "" {
		return fail("--name, --namespace and --remote-cluster-id are required")
	}
	var err error
	if k.PrivateKey, err = os.ReadFile(filepath.Join(*keysDir, "privateKey")); err != nil {
		return fail("reading the private key: %v", err)
	}
	ctrl.SetLogger(zap.New())
	restCfg, err := ctrl.GetConfig()
	if err != nil {
		return fail("%v", err)
	}
	if err := gateway.Run(ctrl.SetupSignalHandler(), restCfg, cfg, k); err != nil {
		return fail("%v", err)
	}
	return 0
}
