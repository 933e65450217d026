package datapath

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
	"golang.zx2c4.com/wireguard/conn"
	"golang.zx2c4.com/wireguard/device"
	"golang.zx2c4.com/wireguard/tun"
)

// TunnelName is the WireGuard interface of a gateway.
const TunnelName = "liqo-tunnel"

// Tunnel is a userspace WireGuard interface: wireguard-go on a TUN device.
type Tunnel struct {
	dev  *device.Device
	link netlink.Link
	peer string
}

// TunnelConfig is what a tunnel is made of.
type TunnelConfig struct {
	PrivateKey []byte
	// ListenPort is where a server listens; 0 picks a free port (client).
	ListenPort int
	MTU        int
	// Address is this end's address on the tunnel (a /30 shared with the
	// peer).
	Address netip.Prefix
}

// OpenTunnel creates the TUN device and the WireGuard device on it, in
// the calling thread's network namespace.
func OpenTunnel(c TunnelConfig) (*Tunnel, error) {
	if len(c.PrivateKey) != 32 {
		return nil, fmt.Errorf("the private key is %d bytes, not 32", len(c.PrivateKey))
	}
	if err := ensureTUNDevice(); err != nil {
		return nil, err
	}
	td, err := tun.CreateTUN(TunnelName, c.MTU)
	if err != nil {
		return nil, fmt.Errorf("creating TUN device %s: %w", TunnelName, err)
	}
	dev := device.NewDevice(td, conn.NewDefaultBind(), device.NewLogger(device.LogLevelError, "wireguard: "))
	t := &Tunnel{dev: dev}
	cfg := "private_key=" + hex.EncodeToString(c.PrivateKey) + "\nlisten_port=" + strconv.Itoa(c.ListenPort) + "\n"
	if err := dev.IpcSet(cfg); err != nil {
		t.Close()
		return nil, fmt.Errorf("configuring WireGuard: %w", err)
	}
	if err := dev.Up(); err != nil {
		t.Close()
		return nil, fmt.Errorf("bringing WireGuard up: %w", err)
	}
	if t.link, err = netlink.LinkByName(TunnelName); err != nil {
		t.Close()
		return nil, err
	}
	addr := &net.IPNet{IP: c.Address.Addr().AsSlice(), Mask: net.CIDRMask(c.Address.Bits(), 32)}
	if err := netlink.AddrReplace(t.link, &netlink.Addr{IPNet: addr}); err != nil {
		t.Close()
		return nil, fmt.Errorf("addressing %s: %w", TunnelName, err)
	}
	if err := netlink.LinkSetUp(t.link); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// tunDevice is the TUN clone device, character device 10:200.
const tunDevice = "/dev/net/tun"

// ensureTUNDevice creates the TUN clone device where it is missing: a
// container's /dev holds only the runtime's default devices, and
// /dev/net/tun is not among them, though the runtimes' device rules allow
// it (containerd and runc both list "tuntap"). Creating it needs
// CAP_MKNOD; opening it, the device rule.
func ensureTUNDevice() error {
	if _, err := os.Stat(tunDevice); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(tunDevice), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(tunDevice), err)
	}
	if err := unix.Mknod(tunDevice, unix.S_IFCHR|0o600, int(unix.Mkdev(10, 200))); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s is missing and cannot be created (it takes CAP_MKNOD): %w", tunDevice, err)
	}
	return nil
}

// Link is the tunnel's interface.
func (t *Tunnel) Link() netlink.Link { return t.link }

// SetPeer sets the one peer: its public key and, for a client, the
// endpoint to dial (host:port, a name is resolved) and a keepalive that
// keeps a NAT binding open and lets the server learn where the client is.
// Setting the same peer again changes nothing (the server keeps the
// endpoint it learned).
func (t *Tunnel) SetPeer(public []byte, endpoint string, keepalive time.Duration) error {
	if len(public) != 32 {
		return fmt.Errorf("the peer's public key is %d bytes, not 32", len(public))
	}
	var b strings.Builder
	b.WriteString("replace_peers=true\npublic_key=" + hex.EncodeToString(public) + "\n")
	if endpoint != "" {
		addr, err := net.ResolveUDPAddr("udp4", endpoint)
		if err != nil {
			return fmt.Errorf("resolving the peer endpoint %s: %w", endpoint, err)
		}
		b.WriteString("endpoint=" + addr.String() + "\n")
	}
	if keepalive > 0 {
		b.WriteString("persistent_keepalive_interval=" + strconv.Itoa(int(keepalive/time.Second)) + "\n")
	}
	b.WriteString("replace_allowed_ips=true\nallowed_ip=0.0.0.0/0\n")
	cfg := b.String()
	if cfg == t.peer {
		return nil
	}
	if err := t.dev.IpcSet(cfg); err != nil {
		return fmt.Errorf("setting the WireGuard peer: %w", err)
	}
	t.peer = cfg
	return nil
}

// Rehandshake starts the peer's session over: the peer is replaced by
// itself, dropping its keys, and (with a keepalive) a handshake goes out
// at once. For a client whose server was replaced by one that never had
// the session.
func (t *Tunnel) Rehandshake() error {
	if t.peer == "" {
		return nil
	}
	if err := t.dev.IpcSet(t.peer); err != nil {
		return fmt.Errorf("setting the WireGuard peer again: %w", err)
	}
	return nil
}

// HasPeer tells whether SetPeer set the peer.
func (t *Tunnel) HasPeer() bool { return t.peer != "" }

// Close tears the device down; the TUN interface goes with it.
func (t *Tunnel) Close() {
	t.dev.Close()
}
