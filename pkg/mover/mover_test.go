package mover

import (
	"archive/tar"
	"bufio"
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pair is a real loopback TCP connection (Send half-closes it).
func pair(t *testing.T) (dial, accepted net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	ch := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		ch <- c
	}()
	dial, err = net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	accepted = <-ch
	t.Cleanup(func() { _ = dial.Close(); _ = accepted.Close() })
	return dial, accepted
}

func fill(t *testing.T, dir string) {
	t.Helper()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "sub", "deep"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "f"), []byte("hello\n"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "sub", "deep", "big"), []byte(strings.Repeat("x", 1<<20)), 0o600))
	must(os.WriteFile(filepath.Join(dir, "empty"), nil, 0o640))
	must(os.Symlink("f", filepath.Join(dir, "link")))
}

func TestCopy(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	fill(t, src)
	// A fresh ext4 volume's own directory is neither copied nor compared.
	if err := os.Mkdir(filepath.Join(dst, lostFound), 0o700); err != nil {
		t.Fatal(err)
	}
	a, b := pair(t)
	got := make(chan error, 1)
	var recv Summary
	go func() {
		var err error
		recv, err = Receive(b, dst)
		got <- err
	}()
	sent, err := Send(a, src, nil)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if err := <-got; err != nil {
		t.Fatalf("Receive: %v", err)
	}
	if sent != recv || sent.Files != 3 || sent.Bytes != 6+1<<20 {
		t.Errorf("sent %v, received %v", sent, recv)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "sub", "deep", "big")); err != nil || len(b) != 1<<20 {
		t.Errorf("big: %d bytes, %v", len(b), err)
	}
	if target, err := os.Readlink(filepath.Join(dst, "link")); err != nil || target != "f" {
		t.Errorf("link: %q, %v", target, err)
	}
	if st, err := os.Stat(filepath.Join(dst, "sub", "deep", "big")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("big's mode: %v, %v", st.Mode(), err)
	}
}

// TestCutCopy: a connection that breaks mid-archive fails the sender
// (no answer) and the receiver (a truncated archive).
func TestCutCopy(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	fill(t, src)
	a, b := pair(t)
	got := make(chan error, 1)
	go func() {
		_, err := Receive(b, dst)
		got <- err
	}()
	cut := &cutConn{Conn: a, left: 4096}
	if _, err := Send(cut, src, nil); err == nil {
		t.Error("Send succeeded over a connection cut after 4 KiB")
	}
	if err := <-got; err == nil {
		t.Error("Receive succeeded with a truncated archive")
	}
}

// cutConn closes the connection after left bytes written.
type cutConn struct {
	net.Conn
	left int
}

func (c *cutConn) Write(p []byte) (int, error) {
	if len(p) > c.left {
		n, _ := c.Conn.Write(p[:c.left])
		_ = c.Close()
		return n, net.ErrClosed
	}
	c.left -= len(p)
	return c.Conn.Write(p)
}

// TestHostileArchive: entries that would leave the volume are refused and
// the sender is told.
func TestHostileArchive(t *testing.T) {
	for _, entries := range [][]tar.Header{
		{{Name: "../escape", Typeflag: tar.TypeReg, Mode: 0o644}},
		{{Name: "/abs", Typeflag: tar.TypeReg, Mode: 0o644}},
		{{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "/tmp"}, {Name: "l/x", Typeflag: tar.TypeReg, Mode: 0o644}},
		{{Name: "dev", Typeflag: tar.TypeChar, Mode: 0o644}},
	} {
		dst := t.TempDir()
		a, b := pair(t)
		got := make(chan error, 1)
		go func() {
			_, err := Receive(b, dst)
			got <- err
		}()
		tw := tar.NewWriter(a)
		for _, h := range entries {
			_ = tw.WriteHeader(&h)
		}
		_ = tw.Close()
		_ = a.(*net.TCPConn).CloseWrite()
		answer := make([]byte, 200)
		n, _ := a.Read(answer)
		if err := <-got; err == nil || !strings.HasPrefix(string(answer[:n]), "ERR ") {
			t.Errorf("%s: Receive %v, answered %q", entries[len(entries)-1].Name, err, answer[:n])
		}
	}
}

// hostileArchives would write, chmod or touch outside the volume, given
// outside (a directory next to it): through a link the archive makes and
// then writes to as a file or a directory, through a link the volume held
// before, or by name.
func hostileArchives(outside string) map[string][]tar.Header {
	return map[string][]tar.Header{
		"a file through its own link": {{Name: "x", Typeflag: tar.TypeSymlink, Linkname: filepath.Join(outside, "planted")},
			{Name: "x", Typeflag: tar.TypeReg, Mode: 0o644, Size: 0}},
		"a directory through its own link": {{Name: "d", Typeflag: tar.TypeSymlink, Linkname: outside},
			{Name: "d", Typeflag: tar.TypeDir, Mode: 0o777}},
		"a file below a link the volume held": {{Name: "pre/planted", Typeflag: tar.TypeReg, Mode: 0o644}},
		"a file below a relative link":        {{Name: "up", Typeflag: tar.TypeSymlink, Linkname: "../outside"}, {Name: "up/planted", Typeflag: tar.TypeReg, Mode: 0o644}},
		"a climbing name":                     {{Name: "a/../../outside/planted", Typeflag: tar.TypeReg, Mode: 0o644}},
	}
}

// TestArchiveCannotLeaveTheVolume sends the receiver hostile archives (a
// sender on the other side of the fabric is a peer's pod): each fails the
// copy, and nothing outside the volume is written or changed.
func TestArchiveCannotLeaveTheVolume(t *testing.T) {
	for name, entries := range hostileArchives("") {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			vol, outside := filepath.Join(parent, "volume"), filepath.Join(parent, "outside")
			for _, d := range []string{vol, outside} {
				if err := os.Mkdir(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink(outside, filepath.Join(vol, "pre")); err != nil {
				t.Fatal(err)
			}
			entries = hostileArchives(outside)[name]
			var buf bytes.Buffer
			tw := tar.NewWriter(&buf)
			for _, h := range entries {
				if err := tw.WriteHeader(&h); err != nil {
					t.Fatal(err)
				}
			}
			_ = tw.Close()
			a, b := pair(t)
			got := make(chan error, 1)
			go func() {
				_, err := Receive(b, vol)
				got <- err
			}()
			_, _ = a.Write(buf.Bytes())
			_ = a.(*net.TCPConn).CloseWrite()
			// The answer, up to its line's end (the receiver keeps the
			// connection open).
			answer, _ := bufio.NewReader(a).ReadString('\n')
			err := <-got
			untouched(t, outside)
			// A file replacing a link is written in the volume, in the
			// link's place; the rest cannot be, and fail the copy.
			if name == "a file through its own link" {
				if st, lerr := os.Lstat(filepath.Join(vol, "x")); err != nil || lerr != nil || !st.Mode().IsRegular() {
					t.Errorf("Receive: %v; x in the volume: %v (%v)", err, st, lerr)
				}
				return
			}
			if err == nil || !strings.HasPrefix(answer, "ERR ") {
				t.Errorf("Receive: %v, answered %q", err, answer)
			}
		})
	}
}

// untouched fails t if anything was written in outside or its mode changed.
func untouched(t testing.TB, outside string) {
	t.Helper()
	if left, err := os.ReadDir(outside); err != nil || len(left) > 0 {
		t.Fatalf("outside the volume: %v (%v)", left, err)
	}
	if st, err := os.Stat(outside); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("the mode of the directory outside the volume: %v (%v)", st.Mode(), err)
	}
}

// FuzzUnpack: whatever archive a peer's sender sends, unpacking it writes
// nothing outside the volume, not even through a link the volume held.
func FuzzUnpack(f *testing.F) {
	seed := func(entries []tar.Header) []byte {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for _, h := range entries {
			_ = tw.WriteHeader(&h)
			if h.Size > 0 {
				_, _ = tw.Write(bytes.Repeat([]byte("x"), int(h.Size)))
			}
		}
		_ = tw.Close()
		return buf.Bytes()
	}
	// The fuzzer's outside is "../outside" from the volume.
	for _, entries := range hostileArchives("../outside") {
		f.Add(seed(entries))
	}
	f.Add(seed([]tar.Header{{Name: "ok", Typeflag: tar.TypeDir, Mode: 0o755}, {Name: "ok/f", Typeflag: tar.TypeReg, Mode: 0o644, Size: 3}}))
	f.Fuzz(func(t *testing.T, archive []byte) {
		parent := t.TempDir()
		vol, outside := filepath.Join(parent, "volume"), filepath.Join(parent, "outside")
		for _, d := range []string{vol, outside} {
			if err := os.Mkdir(d, 0o700); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink("../outside", filepath.Join(vol, "pre")); err != nil {
			t.Fatal(err)
		}
		_ = unpack(bytes.NewReader(archive), vol)
		untouched(t, outside)
	})
}
