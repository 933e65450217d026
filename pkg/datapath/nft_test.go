package datapath

import (
	"fmt"
	"net"
	"testing"

	"github.com/google/nftables"

	"github.com/liqo-go/liqo/pkg/testbed/netns"
	"github.com/liqo-go/liqo/pkg/testbed/netnstest"
)

// TestReplaceTableKeepsCounters: a gateway replaces its table on every
// change of its state; the drop counters in it must not start over each
// time, or a peer's hostile packets would vanish from the count. Real
// packets (UDP on the loopback of a namespace of the test's own) are
// counted, the table is replaced, and the count is still there and goes
// on rising.
func TestReplaceTableKeepsCounters(t *testing.T) {
	ns := netnstest.New(t, "lqnft")

	const table, counter, port = "test-counters", "seen", 9
	// A regular chain reached by goto, as the gateway's filter has.
	chains := []Chain{
		{Name: "out", Type: nftables.ChainTypeFilter, Hook: nftables.ChainHookOutput, Priority: nftables.ChainPriorityFilter,
			Rules: []Rule{Join(UDPDestPort(port), Goto("count"))}},
		{Name: "count", Rules: []Rule{Join(CountIn(counter), Accept())}},
	}
	// Something listens, so that no ICMP error fails the sender's writes.
	var sink *net.UDPConn
	if err := netns.Do(ns, func() (err error) {
		sink, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sink.Close() })
	send := func(n int) {
		t.Helper()
		if err := netns.Do(ns, func() error {
			c, err := net.Dial("udp4", fmt.Sprintf("127.0.0.1:%d", port))
			if err != nil {
				return err
			}
			defer func() { _ = c.Close() }()
			for range n {
				if _, err := c.Write([]byte("x")); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	packets := func() uint64 {
		t.Helper()
		var got map[string]Count
		if err := netns.Do(ns, func() (err error) { got, err = Counters(table); return err }); err != nil {
			t.Fatal(err)
		}
		return got[counter].Packets
	}
	replace := func() {
		t.Helper()
		if err := netns.Do(ns, func() error { return ReplaceTable(table, chains, counter) }); err != nil {
			t.Fatal(err)
		}
	}

	replace()
	send(3)
	if got := packets(); got != 3 {
		t.Fatalf("counted %d packets, want 3", got)
	}
	replace()
	if got := packets(); got != 3 {
		t.Fatalf("after a replace the counter holds %d packets, want the 3 counted before", got)
	}
	send(2)
	if got := packets(); got != 5 {
		t.Fatalf("counted %d packets, want 5", got)
	}
	if err := netns.Do(ns, func() error { return DeleteTable(table) }); err != nil {
		t.Fatal(err)
	}
}
