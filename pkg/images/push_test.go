package images

import "testing"

func TestMirrorRef(t *testing.T) {
	tests := []struct {
		upstream string
		want     string
	}{
		{"docker.io/library/busybox:latest", "127.0.0.1:5000/library/busybox:latest"},
		{"busybox:1.35", "127.0.0.1:5000/library/busybox:1.35"},
		{"busybox", "127.0.0.1:5000/library/busybox:latest"},
		{"registry.k8s.io/pause:3.10", "127.0.0.1:5000/pause:3.10"},
		{"registry.k8s.io/coredns/coredns:v1.14.7", "127.0.0.1:5000/coredns/coredns:v1.14.7"},
		{"ghcr.io/liqotech/liqo:v1", "127.0.0.1:5000/liqotech/liqo:v1"},
		{
			"registry.k8s.io/pause@sha256:0000000000000000000000000000000000000000000000000000000000000000",
			"127.0.0.1:5000/pause@sha256:0000000000000000000000000000000000000000000000000000000000000000",
		},
	}
	for _, tt := range tests {
		t.Run(tt.upstream, func(t *testing.T) {
			ref, err := MirrorRef("127.0.0.1:5000", tt.upstream)
			if err != nil {
				t.Fatal(err)
			}
			if ref.Name() != tt.want {
				t.Errorf("got %s, want %s", ref.Name(), tt.want)
			}
			if s := ref.Context().Scheme(); s != "http" {
				t.Errorf("scheme %s, want http", s)
			}
		})
	}
	if _, err := MirrorRef("127.0.0.1:5000", "Not An Image"); err == nil {
		t.Error("an invalid name was accepted")
	}
}
