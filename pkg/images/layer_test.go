package images

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// tarEntry is one header of a layer with its content.
type tarEntry struct {
	hdr  *tar.Header
	data []byte
}

// readLayer lists a layer's entries in their order in the tar.
func readLayer(t *testing.T, layer v1.Layer) ([]string, map[string]tarEntry) {
	t.Helper()
	rc, err := layer.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var order []string
	entries := map[string]tarEntry{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return order, entries
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		order = append(order, hdr.Name)
		entries[hdr.Name] = tarEntry{hdr: hdr, data: data}
	}
}

func TestLayerContents(t *testing.T) {
	host := filepath.Join(t.TempDir(), "tool")
	if err := os.WriteFile(host, []byte("#!/bin/true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	layer, err := Layer([]Entry{
		{Path: "/usr/bin/tool", Mode: 0o755, HostFile: host},
		{Path: "etc//motd", Data: []byte("hello\n")},
		{Path: "/bin/sh", Link: "busybox"},
		{Path: "/tmp/cache", Dir: true},
		{Path: "/tmp", Dir: true, Mode: 0o1777},
		{Path: "/bin-extra/empty"},
	})
	if err != nil {
		t.Fatal(err)
	}
	order, entries := readLayer(t, layer)

	// Sorted by path, so a directory comes before what it holds, though not
	// always right before: /bin-extra sorts between /bin and /bin/sh.
	wantOrder := []string{"bin/", "bin-extra/", "bin-extra/empty", "bin/sh", "etc/", "etc/motd", "tmp/", "tmp/cache/", "usr/", "usr/bin/", "usr/bin/tool"}
	if !slices.Equal(order, wantOrder) {
		t.Errorf("entries %q, want %q", order, wantOrder)
	}

	tests := []struct {
		name     string
		typeflag byte
		mode     int64
		data     string
		link     string
	}{
		{name: "usr/bin/tool", typeflag: tar.TypeReg, mode: 0o755, data: "#!/bin/true\n"},
		{name: "usr/bin/", typeflag: tar.TypeDir, mode: 0o755},
		{name: "etc/motd", typeflag: tar.TypeReg, mode: 0o644, data: "hello\n"},
		{name: "bin/sh", typeflag: tar.TypeSymlink, mode: 0o777, link: "busybox"},
		{name: "tmp/", typeflag: tar.TypeDir, mode: 0o1777},
		{name: "tmp/cache/", typeflag: tar.TypeDir, mode: 0o755},
		{name: "bin-extra/empty", typeflag: tar.TypeReg, mode: 0o644},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, ok := entries[tt.name]
			if !ok {
				t.Fatalf("no entry %s", tt.name)
			}
			h := e.hdr
			if h.Typeflag != tt.typeflag || h.Mode != tt.mode || string(e.data) != tt.data || h.Linkname != tt.link {
				t.Errorf("got type %q mode %o data %q link %q, want type %q mode %o data %q link %q",
					h.Typeflag, h.Mode, e.data, h.Linkname, tt.typeflag, tt.mode, tt.data, tt.link)
			}
			if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || !h.ModTime.Equal(time.Unix(0, 0)) {
				t.Errorf("owner %d:%d (%q:%q), mtime %v; want root and the epoch", h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime)
			}
		})
	}
}

func TestLayerRejects(t *testing.T) {
	tests := []struct {
		name    string
		entries []Entry
		want    string
	}{
		{name: "root", entries: []Entry{{Path: "/", Dir: true}}, want: "not a path below /"},
		{name: "empty path", entries: []Entry{{Data: []byte("x")}}, want: "not a path below /"},
		{name: "twice", entries: []Entry{{Path: "/a"}, {Path: "a"}}, want: "given twice"},
		{name: "two kinds", entries: []Entry{{Path: "/a", Link: "b", Dir: true}}, want: "more than one"},
		{name: "file type bits", entries: []Entry{{Path: "/a", Mode: 0o100644}}, want: "bits other than"},
		{name: "parent is a file", entries: []Entry{{Path: "/a"}, {Path: "/a/b"}}, want: "not a directory"},
		{name: "parent is a symlink", entries: []Entry{{Path: "/a", Link: "/b"}, {Path: "/a/b"}}, want: "not a directory"},
		{name: "missing host file", entries: []Entry{{Path: "/a", HostFile: "/nonexistent/file"}}, want: "no such file"},
		{name: "host directory", entries: []Entry{{Path: "/a", HostFile: os.TempDir()}}, want: "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Layer(tt.entries)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

// TestReproducible builds the same image twice, the second time from a
// copy of the host file with another modification time and mode: the
// digests must match, since only the file's bytes enter the image.
func TestReproducible(t *testing.T) {
	dir := t.TempDir()
	first, second := filepath.Join(dir, "first"), filepath.Join(dir, "second")
	for _, f := range []string{first, second} {
		if err := os.WriteFile(f, []byte("a static binary, pretend"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(second, time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(second, 0o640); err != nil {
		t.Fatal(err)
	}
	build := func(host string) v1.Hash {
		t.Helper()
		img, err := FromEntries([]Entry{
			{Path: "/app", Mode: 0o755, HostFile: host},
			{Path: "/etc/app.conf", Data: []byte("x=1\n")},
			{Path: "/bin/app", Link: "/app"},
		}, Config{Entrypoint: []string{"/app"}, Env: []string{"A=1"}, ExposedPorts: []string{"8080/tcp"}})
		if err != nil {
			t.Fatal(err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	a, b, c := build(first), build(first), build(second)
	if a != b {
		t.Errorf("same inputs, digests %s and %s", a, b)
	}
	if a != c {
		t.Errorf("same bytes with another mtime and mode, digests %s and %s", a, c)
	}
	time.Sleep(1100 * time.Millisecond) // a build time in the image would now differ
	if d := build(first); d != a {
		t.Errorf("built a second later, digest %s, want %s", d, a)
	}
}
