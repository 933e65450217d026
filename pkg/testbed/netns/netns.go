package netns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/vishvananda/netlink"
	vns "github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Dir is where named namespaces are bound, as with `ip netns add`.
const Dir = "/run/netns"

// Path is the bind mount of a named namespace, the argument of
// `nsenter --net=`.
func Path(name string) string { return filepath.Join(Dir, name) }

// Exists tells whether a named namespace is bound.
func Exists(name string) bool {
	_, err := os.Stat(Path(name))
	return err == nil
}

// Create makes a named network namespace with its loopback up.
func Create(name string) error {
	if Exists(name) {
		return fmt.Errorf("network namespace %s already exists", name)
	}
	err := onThread(func() error {
		h, err := vns.NewNamed(name) // unshares this thread into the new namespace
		if err != nil {
			return err
		}
		_ = h.Close()
		lo, err := netlink.LinkByName("lo")
		if err != nil {
			return err
		}
		return netlink.LinkSetUp(lo)
	})
	if err != nil {
		return fmt.Errorf("creating network namespace %s: %w", name, err)
	}
	return nil
}

// Delete unbinds a named namespace; the kernel frees it, with its links,
// routes and firewall rules, once no process and no socket holds it.
// Deleting a namespace that does not exist is not an error.
func Delete(name string) error {
	if !Exists(name) {
		return nil
	}
	if err := vns.DeleteNamed(name); err != nil && !errors.Is(err, os.ErrNotExist) {
		// A bind mount already gone leaves only the file behind.
		if rmErr := os.Remove(Path(name)); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
			return fmt.Errorf("deleting network namespace %s: %w", name, err)
		}
	}
	return nil
}

// List returns the named namespaces whose names start with prefix.
func List(prefix string) []string {
	entries, _ := os.ReadDir(Dir)
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			names = append(names, e.Name())
		}
	}
	return names
}

// Do runs fn on a thread inside the named namespace.
func Do(name string, fn func() error) error {
	return onThread(func() error {
		h, err := vns.GetFromPath(Path(name))
		if err != nil {
			return fmt.Errorf("opening network namespace %s: %w", name, err)
		}
		defer func() { _ = h.Close() }()
		if err := vns.Set(h); err != nil {
			return fmt.Errorf("entering network namespace %s: %w", name, err)
		}
		return fn()
	})
}

// onThread runs fn on a locked OS thread and puts the thread back into the
// namespace it started in. A thread that cannot return is not unlocked, so
// the runtime retires it when the goroutine ends instead of reusing it.
func onThread(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := vns.Get()
		if err != nil {
			errc <- err
			return // the thread is retired with the goroutine
		}
		defer func() { _ = orig.Close() }()
		err = fn()
		if setErr := vns.Set(orig); setErr != nil {
			errc <- errors.Join(err, fmt.Errorf("returning to the original network namespace: %w", setErr))
			return
		}
		runtime.UnlockOSThread()
		errc <- err
	}()
	return <-errc
}

// Listen opens a listener inside the named namespace.
func Listen(name, network, addr string) (net.Listener, error) {
	var l net.Listener
	err := Do(name, func() error {
		var err error
		l, err = net.Listen(network, addr)
		return err
	})
	return l, err
}

// Dial connects from inside the named namespace.
func Dial(ctx context.Context, name, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := Do(name, func() error {
		var err error
		var d net.Dialer
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// Netlink returns a netlink handle bound to the named namespace; Close it.
func Netlink(name string) (*netlink.Handle, error) {
	h, err := vns.GetFromPath(Path(name))
	if err != nil {
		return nil, fmt.Errorf("opening network namespace %s: %w", name, err)
	}
	defer func() { _ = h.Close() }()
	nh, err := netlink.NewHandleAt(h)
	if err != nil {
		return nil, fmt.Errorf("netlink in network namespace %s: %w", name, err)
	}
	return nh, nil
}

// Sysctl writes a per-namespace network sysctl (a path under
// /proc/sys/net, such as "ipv4/ip_forward") inside the named namespace.
func Sysctl(name, key, value string) error {
	return Do(name, func() error {
		return os.WriteFile(filepath.Join("/proc/sys/net", key), []byte(value), 0o644)
	})
}

// Fd opens the named namespace for APIs that take a descriptor (nftables'
// WithNetNSFd); close it with unix.Close.
func Fd(name string) (int, error) {
	return unix.Open(Path(name), unix.O_RDONLY|unix.O_CLOEXEC, 0)
}
