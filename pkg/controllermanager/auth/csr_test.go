package auth

import (
	"crypto/ed25519"
	"crypto/rand"
	"strings"
	"testing"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
)

func TestCheckCSR(t *testing.T) {
	pub, key, _ := ed25519.GenerateKey(rand.Reader)
	otherPub, otherKey, _ := ed25519.GenerateKey(rand.Reader)
	good, err := NewCSR(key, "liqo-consumer-rome", "liqo.io:consumers")
	if err != nil {
		t.Fatal(err)
	}
	wrongUser, _ := NewCSR(key, "system:admin", "liqo.io:consumers")
	wrongGroup, _ := NewCSR(key, "liqo-consumer-rome", "system:masters")
	otherKeyCSR, _ := NewCSR(otherKey, "liqo-consumer-rome", "liqo.io:consumers")
	cases := []struct {
		name    string
		csr     []byte
		pub     []byte
		wantErr string
	}{
		{"valid", good, pub, ""},
		{"another user", wrongUser, pub, `asks for "system:admin"`},
		{"another group", wrongGroup, pub, "system:masters"},
		{"key not the presented one", otherKeyCSR, pub, "not the cluster's public key"},
		{"presented key not the CSR's", good, otherPub, "not the cluster's public key"},
		{"not PEM", []byte("garbage"), pub, "not a PEM certificate request"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckCSR(c.csr, c.pub, "liqo-consumer-rome", "liqo.io:consumers")
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("got %v, want error containing %q", err, c.wantErr)
			}
		})
	}
}

func TestBuildKubeconfig(t *testing.T) {
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	if _, err := BuildKubeconfig(&authv1beta1.AuthParams{}, key, "u"); err == nil {
		t.Fatal("empty auth params accepted")
	}
	kc, err := BuildKubeconfig(&authv1beta1.AuthParams{APIServer: "https://127.0.0.1:6443", CA: []byte("ca"), SignedCRT: []byte("crt")}, key, "u")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := RESTConfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://127.0.0.1:6443" || string(cfg.CAData) != "ca" || string(cfg.CertData) != "crt" || !strings.Contains(string(cfg.KeyData), "PRIVATE KEY") {
		t.Fatalf("unexpected config: host %s ca %q cert %q", cfg.Host, cfg.CAData, cfg.CertData)
	}
}
