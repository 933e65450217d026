package main

import (
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// TestOIDCKubeconfig: a kubeconfig whose user authenticates with an OIDC
// auth-provider gives a working client, as in kubectl (without the
// plugin's import, client-go answers: no Auth Provider found for name "oidc").
func TestOIDCKubeconfig(t *testing.T) {
	const kubeconfig = `apiVersion: v1
kind: Config
current-context: sso
clusters:
- name: c
  cluster: {server: "https://c.example:6443"}
contexts:
- name: sso
  context: {cluster: c, user: u}
users:
- name: u
  user:
    auth-provider:
      name: oidc
      config:
        client-id: liqoctl
        idp-issuer-url: https://issuer.example
        id-token: header.payload.signature
`
	cc, err := clientcmd.NewClientConfigFromBytes([]byte(kubeconfig))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rest.TransportFor(cfg); err != nil {
		t.Fatalf("the OIDC kubeconfig does not load: %v", err)
	}
}
