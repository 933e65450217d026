package clientcfg

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

func TestTuned(t *testing.T) {
	cases := []struct {
		name      string
		in        rest.Config
		wantQPS   float32
		wantBurst int
	}{
		{"defaults filled", rest.Config{}, QPS, Burst},
		{"explicit limits kept", rest.Config{QPS: 20, Burst: 30}, 20, 30},
	}
	for _, c := range cases {
		in := c.in
		got := Tuned(&in)
		if got.QPS != c.wantQPS || got.Burst != c.wantBurst || got.ContentType != "" {
			t.Errorf("%s: got QPS %v burst %d type %q, want %v %d and no content type", c.name, got.QPS, got.Burst,
				got.ContentType, c.wantQPS, c.wantBurst)
		}
		if got.UserAgent != rest.DefaultKubernetesUserAgent() {
			t.Errorf("%s: user agent %q, want client-go's default", c.name, got.UserAgent)
		}
		if in.QPS != c.in.QPS || in.UserAgent != "" {
			t.Errorf("%s: the input config was modified", c.name)
		}
	}
}

func TestTunedKeepsUserAgent(t *testing.T) {
	if got := Tuned(&rest.Config{UserAgent: "liqoctl"}); got.UserAgent != "liqoctl" {
		t.Errorf("user agent %q, want the one set kept", got.UserAgent)
	}
}

func TestProtobuf(t *testing.T) {
	var in rest.Config
	if got := Protobuf(&in); got.ContentType != runtime.ContentTypeProtobuf || in.ContentType != "" {
		t.Errorf("got content type %q (input %q), want protobuf and the input untouched", got.ContentType, in.ContentType)
	}
	json := rest.Config{ContentConfig: rest.ContentConfig{ContentType: runtime.ContentTypeJSON}}
	if got := Protobuf(&json); got.ContentType != runtime.ContentTypeJSON {
		t.Errorf("an explicit content type was replaced by %q", got.ContentType)
	}
}
