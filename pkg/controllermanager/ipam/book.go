package ipam

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha1 "github.com/liqo-go/liqo/apis/ipam/v1alpha1"
	"github.com/liqo-go/liqo/pkg/ipam"
	"github.com/liqo-go/liqo/pkg/kit"
)

// errConflict marks an allocation found in an object's status that the
// book could not take back at start (it overlaps another one, or a local
// network since the flags changed). It is reported, never silently
// replaced: peers route to the old value.
var errConflict = errors.New("conflict")

// errExhausted and errInvalid mark requests that cannot be met until
// something changes: no free network or address, or a malformed value.
var (
	errExhausted = errors.New("exhausted")
	errInvalid   = errors.New("invalid")
)

// owner is the object an allocation belongs to: its name and UID, so that
// an object deleted and created again under the same name does not
// inherit the old allocation.
type owner struct {
	key types.NamespacedName
	uid types.UID
}

type ipEntry struct {
	network netip.Prefix
	ip      netip.Addr
	uid     types.UID
}

// Book is the cluster's allocations, shared by the reconcilers. It is
// rebuilt from the API objects before its first use.
type Book struct {
	opts   Options
	reader client.Reader
	// nodes reads the Nodes, whose networks are reserved before each
	// allocation: nodes join after the start.
	nodes client.Reader

	mu        sync.Mutex
	alloc     *ipam.Allocator
	nets      map[types.NamespacedName]owner
	prefixes  map[types.NamespacedName]netip.Prefix
	ips       map[types.NamespacedName]ipEntry
	conflicts map[types.NamespacedName]error
}

// NewBook returns the book of a cluster with networks o; reader reads the
// API server directly (the restore must not see a cache still filling),
// nodes reads the Nodes (a cache: they are listed at each allocation).
func NewBook(o Options, reader, nodes client.Reader) *Book {
	return &Book{opts: o, reader: reader, nodes: nodes}
}

// ensure restores the allocations from the API objects once. It is called
// with b.mu held.
func (b *Book) ensure(ctx context.Context) error {
	if b.alloc != nil {
		return nil
	}
	// Everything routed locally is reserved, so that a peer's network
	// overlapping it is remapped, and no remapped network lands on it;
	// an allocation restored over one is a conflict.
	nodes, err := nodeNetworks(ctx, b.nodes)
	if err != nil {
		return err
	}
	var reserved []netip.Prefix
	for _, l := range b.opts.routedLocally(nodes) {
		if l.p != b.opts.ExternalCIDR {
			reserved = append(reserved, l.p)
		}
	}
	alloc, err := ipam.New(b.opts.Pools, reserved)
	if err != nil {
		return err
	}
	// The external CIDR is allocated rather than reserved: IPs are taken
	// from it.
	if err := alloc.Restore(b.opts.ExternalCIDR); err != nil {
		return fmt.Errorf("the external CIDR: %w", err)
	}
	b.nets = map[types.NamespacedName]owner{}
	b.prefixes = map[types.NamespacedName]netip.Prefix{}
	b.ips = map[types.NamespacedName]ipEntry{}
	b.conflicts = map[types.NamespacedName]error{}

	var nets ipamv1alpha1.NetworkList
	if err := b.reader.List(ctx, &nets); err != nil {
		return fmt.Errorf("listing the Networks to restore the allocations: %w", err)
	}
	// Oldest first: when two objects claim overlapping networks, the one
	// allocated first keeps it.
	slices.SortStableFunc(nets.Items, func(x, y ipamv1alpha1.Network) int {
		return x.CreationTimestamp.Compare(y.CreationTimestamp.Time)
	})
	for _, n := range nets.Items {
		key := client.ObjectKeyFromObject(&n)
		if isLocal(&n) || n.Status.CIDR == "" || !kit.IsTrue(n.Status.Conditions, ipamv1alpha1.AllocatedCondition) {
			continue
		}
		p, err := netip.ParsePrefix(string(n.Status.CIDR))
		if err == nil {
			err = alloc.Restore(p)
		}
		if err != nil {
			b.conflicts[key] = fmt.Errorf("%w: the allocated %s cannot be restored: %v", errConflict, n.Status.CIDR, err)
			continue
		}
		b.nets[key] = owner{key, n.UID}
		b.prefixes[key] = p
	}

	var ips ipamv1alpha1.IPList
	if err := b.reader.List(ctx, &ips); err != nil {
		return fmt.Errorf("listing the IPs to restore the allocations: %w", err)
	}
	for _, ip := range ips.Items {
		key := client.ObjectKeyFromObject(&ip)
		if ip.Status.IP == "" || ip.Status.CIDR == "" {
			continue
		}
		network, err := netip.ParsePrefix(string(ip.Status.CIDR))
		var addr netip.Addr
		if err == nil {
			addr, err = netip.ParseAddr(string(ip.Status.IP))
		}
		if err == nil {
			err = alloc.RestoreIP(network, addr)
		}
		if err != nil {
			b.conflicts[key] = fmt.Errorf("%w: the allocated %s cannot be restored: %v", errConflict, ip.Status.IP, err)
			continue
		}
		b.ips[key] = ipEntry{network, addr, ip.UID}
	}
	b.alloc = alloc
	return nil
}

// Network returns the network allocated to n, allocating it when n has
// none yet. fresh says whether this call allocated it (the caller releases
// it if recording it in the status fails).
func (b *Book) Network(ctx context.Context, n *ipamv1alpha1.Network) (p netip.Prefix, fresh bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.ensure(ctx); err != nil {
		return netip.Prefix{}, false, err
	}
	key := client.ObjectKeyFromObject(n)
	if err := b.conflicts[key]; err != nil {
		return netip.Prefix{}, false, err
	}
	if o, ok := b.nets[key]; ok {
		if o.uid == n.UID {
			return b.prefixes[key], false, nil
		}
		b.releaseNetwork(key) // an older object of the same name
	}
	if n.Status.CIDR != "" && kit.IsTrue(n.Status.Conditions, ipamv1alpha1.AllocatedCondition) {
		// Allocated by an earlier run, not restored: created after the
		// restore listed, by another replica. Take the same value back.
		p, err := netip.ParsePrefix(string(n.Status.CIDR))
		if err == nil {
			err = b.alloc.Restore(p)
		}
		if err != nil {
			b.conflicts[key] = fmt.Errorf("%w: the allocated %s cannot be restored: %v", errConflict, n.Status.CIDR, err)
			return netip.Prefix{}, false, b.conflicts[key]
		}
		b.nets[key], b.prefixes[key] = owner{key, n.UID}, p
		return p, false, nil
	}
	want, err := netip.ParsePrefix(string(n.Spec.CIDR))
	if err != nil {
		return netip.Prefix{}, false, fmt.Errorf("%w: spec.cidr %q: %v", errInvalid, n.Spec.CIDR, err)
	}
	// Nodes joined since the start: their networks are no peer's.
	nodes, err := nodeNetworks(ctx, b.nodes)
	if err != nil {
		return netip.Prefix{}, false, err
	}
	if err := b.alloc.Reserve(nodes...); err != nil {
		return netip.Prefix{}, false, err
	}
	p, err = b.alloc.AcquireNetwork(want)
	if err != nil {
		return netip.Prefix{}, false, fmt.Errorf("%w: %v", errExhausted, err)
	}
	b.nets[key], b.prefixes[key] = owner{key, n.UID}, p
	return p, true, nil
}

// ReleaseNetwork frees what the Network key held: it is gone.
func (b *Book) ReleaseNetwork(key types.NamespacedName) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.releaseNetwork(key)
}

func (b *Book) releaseNetwork(key types.NamespacedName) {
	delete(b.conflicts, key)
	p, ok := b.prefixes[key]
	if !ok || b.alloc == nil {
		return
	}
	b.alloc.ReleaseNetwork(p)
	delete(b.nets, key)
	delete(b.prefixes, key)
	// The addresses inside went with it.
	for k, e := range b.ips {
		if e.network == p {
			delete(b.ips, k)
		}
	}
}

// IP returns the address allocated to ip inside network, allocating it
// when ip has none yet; preAllocated addresses at the start of the
// network are never handed out.
func (b *Book) IP(ctx context.Context, ip *ipamv1alpha1.IP, network netip.Prefix, preAllocated int) (addr netip.Addr, fresh bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.ensure(ctx); err != nil {
		return netip.Addr{}, false, err
	}
	key := client.ObjectKeyFromObject(ip)
	if err := b.conflicts[key]; err != nil {
		return netip.Addr{}, false, err
	}
	if e, ok := b.ips[key]; ok {
		if e.uid == ip.UID && e.network == network {
			return e.ip, false, nil
		}
		b.releaseIP(key)
	}
	if ip.Status.IP != "" {
		a, err := netip.ParseAddr(string(ip.Status.IP))
		if err == nil {
			err = b.alloc.RestoreIP(network, a)
		}
		if err != nil {
			b.conflicts[key] = fmt.Errorf("%w: the allocated %s cannot be restored: %v", errConflict, ip.Status.IP, err)
			return netip.Addr{}, false, b.conflicts[key]
		}
		b.ips[key] = ipEntry{network, a, ip.UID}
		return a, false, nil
	}
	a, err := b.alloc.AcquireIP(network, preAllocated)
	if err != nil {
		return netip.Addr{}, false, fmt.Errorf("%w: %v", errExhausted, err)
	}
	b.ips[key] = ipEntry{network, a, ip.UID}
	return a, true, nil
}

// ReleaseIP frees what the IP key held.
func (b *Book) ReleaseIP(key types.NamespacedName) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.releaseIP(key)
}

func (b *Book) releaseIP(key types.NamespacedName) {
	delete(b.conflicts, key)
	e, ok := b.ips[key]
	if !ok || b.alloc == nil {
		return
	}
	b.alloc.ReleaseIP(e.network, e.ip)
	delete(b.ips, key)
}

// isLocal tells a Network of this cluster's own CIDRs, never allocated
// from the pools.
func isLocal(n *ipamv1alpha1.Network) bool {
	return n.Labels[ipamv1alpha1.NetworkNotRemappedLabel] == "true"
}
