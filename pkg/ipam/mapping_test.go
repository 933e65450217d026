package ipam

import "testing"

func TestMapping(t *testing.T) {
	m, err := NewMapping([]string{"10.244.0.0/16", "10.70.0.0/16"}, []string{"10.71.0.0/16", "10.72.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	for ip, want := range map[string]string{"10.244.3.7": "10.71.3.7", "10.70.0.1": "10.72.0.1", "10.245.0.1": "", "not-an-ip": "", "fd00::1": ""} {
		got, ok := m.Translate(ip)
		if got != want || ok != (want != "") {
			t.Errorf("Translate(%s) = %q, %v; want %q", ip, got, ok, want)
		}
	}
	for _, bad := range [][2][]string{
		{{"10.244.0.0/16"}, {}},
		{{"10.244.0.0/16"}, {"10.71.0.0/24"}},
		{{"10.244.0.0/16"}, {"nope"}},
	} {
		if _, err := NewMapping(bad[0], bad[1]); err == nil {
			t.Errorf("NewMapping(%v, %v) accepted", bad[0], bad[1])
		}
	}
}
