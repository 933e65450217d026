package peeringuser

import "testing"

func TestArgValue(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--cluster-id=milan", "--api-server-url=https://a:6443"}, "https://a:6443"},
		{[]string{"--api-server-url", "https://b:6443"}, "https://b:6443"},
		{[]string{"--api-server-url"}, ""},
		{nil, ""},
	} {
		if got := argValue(c.args, apiServerURLFlag); got != c.want {
			t.Errorf("argValue(%v) = %q, want %q", c.args, got, c.want)
		}
	}
}
