package images

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// debianBusybox is where Debian's busybox-static installs the binary.
const debianBusybox = "/usr/bin/busybox"

func TestBusybox(t *testing.T) {
	host, err := os.ReadFile(debianBusybox)
	if err != nil {
		t.Fatalf("no static busybox: install Debian's busybox-static (liqo-playground build and make test do): %v", err)
	}
	img, err := Busybox(debianBusybox)
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%d layers, want 1", len(layers))
	}
	_, entries := readLayer(t, layers[0])

	if got := entries["bin/busybox"]; !bytes.Equal(got.data, host) || got.hdr.Mode != 0o755 {
		t.Errorf("bin/busybox: %d bytes mode %o, want the %d bytes of %s, mode 755", len(got.data), got.hdr.Mode, len(host), debianBusybox)
	}
	for _, applet := range []string{"sh", "httpd", "wget", "nc", "nslookup", "sleep"} {
		e, ok := entries["bin/"+applet]
		if !ok || e.hdr.Linkname != "busybox" {
			t.Errorf("bin/%s: %+v, want a symlink to busybox", applet, e.hdr)
		}
	}
	if tmp := entries["tmp/"]; tmp.hdr == nil || tmp.hdr.Mode != 0o1777 {
		t.Errorf("tmp: %+v, want a directory of mode 1777", tmp.hdr)
	}
	for _, f := range []string{"etc/passwd", "etc/group"} {
		for _, who := range []string{"root:", "nobody:"} {
			if !strings.Contains(string(entries[f].data), "\n"+who) && !strings.HasPrefix(string(entries[f].data), who) {
				t.Errorf("%s has no %s line: %q", f, strings.TrimSuffix(who, ":"), entries[f].data)
			}
		}
	}

	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Config.Cmd; len(got) != 1 || got[0] != "sh" {
		t.Errorf("Cmd %q, want [sh]", got)
	}
	if got := cfg.Config.Env; len(got) != 1 || got[0] != "PATH=/usr/sbin:/usr/bin:/sbin:/bin" {
		t.Errorf("Env %q", got)
	}
	if cfg.OS != "linux" || cfg.Created.Unix() != 0 {
		t.Errorf("OS %q created %v, want linux and the epoch", cfg.OS, cfg.Created)
	}
}
