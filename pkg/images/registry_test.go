package images

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// startRegistry serves a registry on a loopback port for the test's life,
// with private guarded, and returns its host:port.
func startRegistry(t *testing.T, private ...PrivateRepos) (*Registry, string) {
	t.Helper()
	reg, err := NewRegistry(filepath.Join(t.TempDir(), "blobs"), nil, private...)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	reg.Serve(l)
	t.Cleanup(func() { _ = reg.Close() })
	return reg, l.Addr().String()
}

func TestRegistryPushPull(t *testing.T) {
	if _, err := os.Stat(debianBusybox); err != nil {
		t.Fatalf("no static busybox: install Debian's busybox-static (.ci/run does): %v", err)
	}
	img, err := Busybox(debianBusybox)
	if err != nil {
		t.Fatal(err)
	}
	_, host := startRegistry(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, ref := range []string{"docker.io/library/busybox:latest", "docker.io/library/busybox:1.35"} {
		if err := Push(ctx, host, ref, img); err != nil {
			t.Fatal(err)
		}
	}

	want := digestOf(t, img)
	for _, tag := range []string{"latest", "1.35"} {
		ref, err := name.ParseReference(host+"/library/busybox:"+tag, name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		pulled, err := remote.Image(ref, remote.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		if got := digestOf(t, pulled); got != want {
			t.Errorf("%s: digest %s, want %s", tag, got, want)
		}
		layers, err := pulled.Layers()
		if err != nil || len(layers) != 1 {
			t.Fatalf("%s: %d layers, %v", tag, len(layers), err)
		}
		if _, entries := readLayer(t, layers[0]); entries["bin/sh"].hdr == nil {
			t.Errorf("%s: the pulled layer has no bin/sh", tag)
		}
	}

	// containerd, with this registry as docker.io's mirror, asks this.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+"/v2/library/busybox/manifests/latest?ns=docker.io", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/vnd.oci.image.manifest.v1+json, application/vnd.oci.image.index.v1+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Docker-Content-Digest") != want.String() {
		t.Errorf("mirror request: %s, digest %q; want 200 OK and %s", resp.Status, resp.Header.Get("Docker-Content-Digest"), want)
	}
}

func TestRegistryPushIndex(t *testing.T) {
	idx, err := Index(archImage(t, "amd64"), archImage(t, "arm64"))
	if err != nil {
		t.Fatal(err)
	}
	_, host := startRegistry(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := Push(ctx, host, "ghcr.io/liqo-go/liqo:v1", idx); err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(host+"/liqo-go/liqo:v1", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	pulled, err := remote.Index(ref, remote.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := digestOf(t, pulled), digestOf(t, idx); got != want {
		t.Errorf("index digest %s, want %s", got, want)
	}
	m, err := pulled.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range m.Manifests {
		img, err := pulled.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			t.Fatalf("image %s of the index: %v", d.Digest, err)
		}
		if cfg.Architecture != d.Platform.Architecture {
			t.Errorf("image %s: architecture %s, listed as %s", d.Digest, cfg.Architecture, d.Platform.Architecture)
		}
	}
}

// TestRegistryClose serves on two listeners and checks that Close leaves
// neither accepting: a new connection is refused.
func TestRegistryClose(t *testing.T) {
	reg, err := NewRegistry(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for range 2 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		reg.Serve(l)
		addrs = append(addrs, l.Addr().String())
	}
	for _, a := range addrs {
		resp, err := http.Get("http://" + a + "/v2/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /v2/ on %s: %s", a, resp.Status)
		}
	}

	if err := reg.Close(); err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if c, err := net.DialTimeout("tcp", a, time.Second); err == nil {
			_ = c.Close()
			t.Errorf("%s still accepts connections after Close", a)
		}
	}
	if err := reg.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	// A listener given after Close is closed, not served.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	reg.Serve(l)
	if c, err := net.DialTimeout("tcp", l.Addr().String(), time.Second); err == nil {
		_ = c.Close()
		t.Errorf("a listener served after Close accepts connections")
	}
}
