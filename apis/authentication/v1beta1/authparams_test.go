package v1beta1

import (
	"strings"
	"testing"
)

func TestValidateProxyURL(t *testing.T) {
	cases := []struct{ url, wantErr string }{
		{"http://proxy.example:3128", ""},
		{"https://proxy.example", ""},
		{"socks5://127.0.0.1:1080", ""},
		{"http://user:secret@proxy.example:3128", ""},
		{"ftp://proxy.example:21", "the scheme must be http, https or socks5"},
		{"proxy.example:3128", "the scheme must be"},
		{"//proxy.example:3128", "the scheme must be"},
		{"http://", "has no host"},
		{"http://:3128", "has no host"},
		{"http://proxy.example:port", "not a URL"},
	}
	for _, c := range cases {
		err := ValidateProxyURL(c.url)
		if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("ValidateProxyURL(%q) = %v, want %q", c.url, err, c.wantErr)
		}
	}
}
