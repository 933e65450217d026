package gateway

import (
	"bytes"
	"testing"
)

func TestKeyPair(t *testing.T) {
	priv, pub, err := NewKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckKeyPair(priv, pub); err != nil {
		t.Fatalf("a fresh pair does not check: %v", err)
	}
	priv2, pub2, _ := NewKeyPair()
	if bytes.Equal(priv, priv2) || bytes.Equal(pub, pub2) {
		t.Fatal("two key pairs are equal")
	}
	for name, c := range map[string][2][]byte{
		"mismatched": {priv, pub2},
		"short":      {priv[:31], pub},
		"empty":      {nil, nil},
	} {
		if err := CheckKeyPair(c[0], c[1]); err == nil {
			t.Errorf("%s pair accepted", name)
		}
	}
}
