package netns

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

func name(t *testing.T) string {
	if os.Geteuid() != 0 {
		t.Fatal("network namespaces need root")
	}
	return fmt.Sprintf("lqtb-test-%d", os.Getpid())
}

// TestListenAndDialInside opens a listener inside a new namespace and
// reaches it only from inside: the same address in the root namespace is
// not served, and the namespace is gone after Delete.
func TestListenAndDialInside(t *testing.T) {
	ns := name(t)
	if err := Create(ns); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := Delete(ns); err != nil {
			t.Error(err)
		}
		if Exists(ns) {
			t.Errorf("namespace %s still exists after Delete", ns)
		}
	}()
	if err := Create(ns); err == nil {
		t.Error("creating an existing namespace succeeded")
	}
	l, err := Listen(ns, "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("inside"))
			_ = c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dial(ctx, ns, "tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(c)
	_ = c.Close()
	if string(got) != "inside" {
		t.Errorf("read %q from inside the namespace", got)
	}
	if c, err := net.DialTimeout("tcp", l.Addr().String(), time.Second); err == nil {
		_ = c.Close()
		t.Errorf("%s answered in the root namespace too", l.Addr())
	}
	if err := Sysctl(ns, "ipv4/ip_forward", "1"); err != nil {
		t.Fatal(err)
	}
	root, _ := os.ReadFile("/proc/sys/net/ipv4/ip_forward")
	var inside []byte
	_ = Do(ns, func() error {
		var err error
		inside, err = os.ReadFile("/proc/sys/net/ipv4/ip_forward")
		return err
	})
	if string(inside) != "1\n" {
		t.Errorf("ip_forward inside the namespace is %q, want 1", inside)
	}
	t.Logf("root namespace ip_forward stays %q", root)
}
