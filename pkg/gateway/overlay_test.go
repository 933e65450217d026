package gateway

import (
	"bytes"
	"testing"
)

func TestOverlayNaming(t *testing.T) {
	v := OverlayVNI("uid-1", "node-a")
	if v == 0 || v > 0xFFFFFF {
		t.Fatalf("VNI %d outside 1..2^24-1", v)
	}
	if OverlayVNI("uid-1", "node-a") != v {
		t.Fatal("the VNI is not stable")
	}
	seen := map[uint32]string{}
	for _, n := range []string{"node-a", "node-b", "node-c", "node-d"} {
		for _, g := range []string{"uid-1", "uid-2"} {
			x := OverlayVNI(g, n)
			if prev, ok := seen[x]; ok {
				t.Fatalf("VNI %d for %s/%s and %s", x, g, n, prev)
			}
			seen[x] = g + "/" + n
		}
	}
	gw, node := OverlayMAC(v, true), OverlayMAC(v, false)
	if bytes.Equal(gw, node) || gw[0]&1 != 0 || node[0]&1 != 0 || gw[0]&2 == 0 {
		t.Fatalf("MACs %s %s: must differ, be unicast and locally administered", gw, node)
	}
	if n := OverlayLinkName(0xabc123); n != "liqo.abc123" || len(n) > 15 {
		t.Fatalf("link name %q", n)
	}
}
