package mover

import (
	"archive/tar"
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
