package webhook

import (
	"strings"
	"testing"
)

func TestOptionsEndpoint(t *testing.T) {
	tests := []struct {
		opts              Options
		listen, advertise string
		port              int
		err               string
	}{
		{Options{Addr: "127.0.0.1:0"}, "127.0.0.1", "127.0.0.1", 0, ""},
		{Options{Addr: "127.0.0.1:9443"}, "127.0.0.1", "127.0.0.1", 9443, ""},
		{Options{Addr: "0.0.0.0:9443", AdvertiseHost: "10.0.0.5"}, "0.0.0.0", "10.0.0.5", 9443, ""},
		{Options{Addr: ":9443", AdvertiseHost: "webhook.example"}, "", "webhook.example", 9443, ""},
		{Options{Addr: ":9443"}, "", "", 0, "every interface"},
		{Options{Addr: "0.0.0.0:0"}, "", "", 0, "every interface"},
		{Options{Addr: "127.0.0.1"}, "", "", 0, "not host:port"},
		{Options{Addr: "127.0.0.1:http"}, "", "", 0, "not a number"},
		{Options{Addr: "127.0.0.1:70000"}, "", "", 0, "not a number"},
	}
	for _, tt := range tests {
		listen, advertise, port, err := tt.opts.Endpoint()
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%+v: err = %v, want %q", tt.opts, err, tt.err)
			}
			continue
		}
		if err != nil || listen != tt.listen || advertise != tt.advertise || port != tt.port {
			t.Errorf("%+v: Endpoint = %q %q %d %v, want %q %q %d", tt.opts, listen, advertise, port, err, tt.listen, tt.advertise, tt.port)
		}
	}
}
