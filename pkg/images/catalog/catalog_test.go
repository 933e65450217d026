package catalog

import (
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	c, err := Lookup(ControllerManager)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Ref("dev"), "ghcr.io/liqo-go/liqo-controller-manager:dev"; got != want {
		t.Errorf("Ref(dev) = %s, want %s", got, want)
	}
	if _, err := Lookup("liqo-nope"); err == nil || !strings.Contains(err.Error(), ControllerManager) {
		t.Errorf("an unknown component: error %v, want one listing the components", err)
	}
}
