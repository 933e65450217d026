package testnet

import (
	"errors"
	"strings"
	"testing"
)

func TestMatrix(t *testing.T) {
	got := matrix([]check{
		{from: "local (local)", to: "remote-milan (milan)", via: viaPodIP},
		{from: "local (local)", to: "remote-milan (milan)", via: viaService, err: errors.New("timeout")},
		{from: "local-node (node real-0)", to: "remote-milan (milan)", via: viaPodIP},
		{from: "remote-milan (milan)", to: "local (local)", via: viaService},
	})
	want := []string{
		"FROM                       TO                     POD IP   SERVICE",
		"local (local)              remote-milan (milan)   OK       FAILED",
		"local-node (node real-0)   remote-milan (milan)   OK       -",
		"remote-milan (milan)       local (local)          -        OK",
	}
	if got != strings.Join(want, "\n") {
		t.Errorf("matrix:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}
