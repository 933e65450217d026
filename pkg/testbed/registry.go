package testbed

import (
	"context"
	"fmt"
	"maps"
	"net"
	"path/filepath"
	"strconv"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/liqo-go/liqo/pkg/images"
	"github.com/liqo-go/liqo/pkg/testbed/netns"
)

// registryPort is the registry's port on the underlay.
const registryPort = 5000

// registryAddr is where the cluster's nodes pull from.
func (c *Cluster) registryAddr() string {
	return net.JoinHostPort(c.slot.addr().String(), strconv.Itoa(registryPort))
}

// RegistryAddr is the cluster's registry on this machine's loopback
// (host:port, plain HTTP): push an image there as <addr>/<path>:<tag> and
// pods of the cluster run it as docker.io/<path>:<tag> (or registry.k8s.io,
// ghcr.io, quay.io): the registry mirrors them all. Empty without real nodes.
func (c *Cluster) RegistryAddr() string {
	if c.net == nil || c.net.registryLoopback == "" {
		return ""
	}
	return c.net.registryLoopback
}

// builtImages builds the images every real-node cluster serves: the pause
// sandbox, CoreDNS, metrics-server, busybox (from Debian's busybox-static)
// and the images of the MCS conformance suite (see suiteImages).
func builtImages(bins *Binaries) (map[string]v1.Image, error) {
	imagesOnce.Do(func() {
		imgs := map[string]v1.Image{}
		pause, err := images.Binary(bins.Pause, "/pause", "")
		if err != nil {
			imagesErr = fmt.Errorf("building the pause image: %w", err)
			return
		}
		imgs[pauseImage] = pause
		dns, err := images.Binary(bins.CoreDNS, "/coredns", "")
		if err != nil {
			imagesErr = fmt.Errorf("building the CoreDNS image: %w", err)
			return
		}
		imgs[CoreDNSImage(bins.Versions)] = dns
		ms, err := images.Binary(bins.MetricsServer, "/metrics-server", "")
		if err != nil {
			imagesErr = fmt.Errorf("building the metrics-server image: %w", err)
			return
		}
		imgs[MetricsServerImage(bins.Versions)] = ms
		bb, err := images.Busybox(busyboxPath)
		if err != nil {
			imagesErr = fmt.Errorf("building the busybox image: %w", err)
			return
		}
		for _, tag := range BusyboxImages {
			imgs[tag] = bb
		}
		suite, err := suiteImages()
		if err != nil {
			imagesErr = err
			return
		}
		maps.Copy(imgs, suite)
		builtImagesMap = imgs
	})
	return builtImagesMap, imagesErr
}

// The images are built once per process, whatever the number of clusters.
var (
	imagesOnce     sync.Once
	builtImagesMap map[string]v1.Image
	imagesErr      error
)

// busyboxPath is Debian's static busybox, which hostPackages installs.
const busyboxPath = "/bin/busybox"

// BusyboxImages are the names the busybox image is published under.
var BusyboxImages = []string{"docker.io/library/busybox:latest", "docker.io/library/busybox:1.35"}

// startRegistry serves the cluster's registry on loopback and on the
// underlay, with its PrivatePrefix guarded, and publishes the testbed's
// images in it.
func (c *Cluster) startRegistry() error {
	c.net.registryGuard = newRegistryGuard()
	reg, err := images.NewRegistry(filepath.Join(c.Dir, "registry"), nil, c.net.registryGuard)
	if err != nil {
		return err
	}
	c.net.registry = reg
	lo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	ul, err := netns.Listen(c.slot.ns(), "tcp", c.registryAddr())
	if err != nil {
		lo.Close()
		return fmt.Errorf("listening for the registry on the underlay: %w", err)
	}
	reg.Serve(lo)
	reg.Serve(ul)
	c.net.registryLoopback = lo.Addr().String()
	imgs, err := builtImages(c.bins)
	if err != nil {
		return err
	}
	for ref, img := range imgs {
		if err := images.Push(context.Background(), c.net.registryLoopback, ref, img); err != nil {
			return fmt.Errorf("publishing %s in the testbed registry: %w", ref, err)
		}
	}
	return nil
}

func (c *Cluster) stopRegistry() {
	if c.net.registry != nil {
		_ = c.net.registry.Close()
	}
}
