package coredns

import (
	"strings"
	"testing"
)

// kubeadmCorefile is the Corefile kubeadm deploys.
const kubeadmCorefile = `.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30 {
       disable success cluster.local
       disable denial cluster.local
    }
    loop
    reload
    loadbalance
}
`

// kubeadmConfigured is kubeadmCorefile as AddClustersetZone leaves it.
const kubeadmConfigured = `.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local clusterset.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
       multicluster clusterset.local
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30 {
       disable success cluster.local
       disable denial cluster.local
    }
    loop
    reload
    loadbalance
}
`

func TestAddClustersetZone(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		want    string
		wantErr []string
	}{
		{name: "kubeadm's default", in: kubeadmCorefile, want: kubeadmConfigured},
		{name: "already configured: unchanged", in: kubeadmConfigured, want: kubeadmConfigured},
		{
			name: "configured as the playground's: unchanged",
			in: `.:53 {
    kubernetes cluster.local clusterset.local in-addr.arpa ip6.arpa {
        pods insecure
        multicluster clusterset.local
        fallthrough in-addr.arpa ip6.arpa
    }
}
`,
			want: `.:53 {
    kubernetes cluster.local clusterset.local in-addr.arpa ip6.arpa {
        pods insecure
        multicluster clusterset.local
        fallthrough in-addr.arpa ip6.arpa
    }
}
`,
		},
		{
			name: "bare fallthrough kept, tabs followed",
			in:   ".:53 {\n\tkubernetes cluster.local {\n\t\tfallthrough\n\t}\n\tforward . 8.8.8.8\n}\n",
			want: ".:53 {\n\tkubernetes cluster.local clusterset.local {\n\t\tfallthrough\n\t\tmulticluster clusterset.local\n\t}\n\tforward . 8.8.8.8\n}\n",
		},
		{
			name: "zone listed, option missing",
			in:   ".:53 {\n    kubernetes cluster.local clusterset.local {\n        pods insecure\n    }\n}\n",
			want: ".:53 {\n    kubernetes cluster.local clusterset.local {\n        pods insecure\n        multicluster clusterset.local\n    }\n}\n",
		},
		{
			name: "option naming another zone",
			in:   ".:53 {\n    kubernetes cluster.local other.local {\n        multicluster other.local\n    }\n}\n",
			want: ".:53 {\n    kubernetes cluster.local other.local clusterset.local {\n        multicluster other.local clusterset.local\n    }\n}\n",
		},
		{
			name: "zone with a trailing dot counts",
			in:   ".:53 {\n    kubernetes cluster.local clusterset.local. {\n        multicluster clusterset.local.\n    }\n}\n",
			want: ".:53 {\n    kubernetes cluster.local clusterset.local. {\n        multicluster clusterset.local.\n    }\n}\n",
		},
		{
			name: "no block: one added",
			in:   ".:53 {\n    errors\n    kubernetes cluster.local # the cluster's names\n    forward . /etc/resolv.conf\n}\n",
			want: ".:53 {\n    errors\n    kubernetes cluster.local clusterset.local {\n        multicluster clusterset.local\n    } # the cluster's names\n    forward . /etc/resolv.conf\n}\n",
		},
		{
			name: "no zones: the server block's written out",
			in:   ".:53 {\n    kubernetes {\n        pods insecure\n    }\n}\n",
			want: ".:53 {\n    kubernetes . clusterset.local {\n        pods insecure\n        multicluster clusterset.local\n    }\n}\n",
		},
		{
			name: "several server blocks: the kubernetes one edited",
			in: `example.org:53 {
    forward . 10.0.0.53
}
(common) {
    kubernetes fake.local
}
.:53 {
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        fallthrough in-addr.arpa ip6.arpa
    }
    forward . /etc/resolv.conf
}
`,
			want: `example.org:53 {
    forward . 10.0.0.53
}
(common) {
    kubernetes fake.local
}
.:53 {
    errors
    kubernetes cluster.local clusterset.local in-addr.arpa ip6.arpa {
        fallthrough in-addr.arpa ip6.arpa
        multicluster clusterset.local
    }
    forward . /etc/resolv.conf
}
`,
		},
		{
			name: "a server block for cluster.local only: the zone joins its keys",
			in:   "cluster.local:53 {\n    kubernetes cluster.local {\n        pods insecure\n    }\n}\n.:53 {\n    forward . /etc/resolv.conf\n}\n",
			want: "cluster.local:53 clusterset.local:53 {\n    kubernetes cluster.local clusterset.local {\n        pods insecure\n        multicluster clusterset.local\n    }\n}\n.:53 {\n    forward . /etc/resolv.conf\n}\n",
		},
		{
			name:    "no kubernetes plugin",
			in:      ".:53 {\n    forward . /etc/resolv.conf\n}\n",
			wantErr: []string{"no kubernetes plugin", "multicluster clusterset.local", "serviceimports"},
		},
		{
			name:    "kubernetes only in an import",
			in:      ".:53 {\n    import common\n}\n",
			wantErr: []string{"imports others", "multicluster clusterset.local"},
		},
		{
			name:    "two kubernetes plugins",
			in:      ".:53 {\n    kubernetes cluster.local\n}\n.:5353 {\n    kubernetes cluster.local\n}\n",
			wantErr: []string{"2 kubernetes plugins", "multicluster clusterset.local"},
		},
		{
			name:    "another server block claims the zone",
			in:      "cluster.local:53 {\n    kubernetes cluster.local\n}\nclusterset.local:53 {\n    forward . 10.0.0.53\n}\n",
			want:    "",
			wantErr: []string{`server block "clusterset.local:53"`},
		},
		{
			name:    "a more specific server block for the zone's parent",
			in:      ".:53 {\n    kubernetes cluster.local\n}\nlocal:53 {\n    forward . 10.0.0.53\n}\n",
			wantErr: []string{`server block "local:53"`},
		},
		{
			name: "only reverse zones: the zone goes first",
			in:   ".:53 {\n    kubernetes in-addr.arpa {\n        pods insecure\n    }\n}\n",
			want: ".:53 {\n    kubernetes clusterset.local in-addr.arpa {\n        pods insecure\n        multicluster clusterset.local\n    }\n}\n",
		},
		{
			name:    "one-line block",
			in:      ".:53 {\n    kubernetes cluster.local { pods insecure }\n}\n",
			wantErr: []string{"on one line"},
		},
		{
			name:    "unclosed block",
			in:      ".:53 {\n    kubernetes cluster.local {\n        pods insecure\n}\n",
			wantErr: []string{"never closed"},
		},
		{
			name:    "unterminated quote",
			in:      ".:53 {\n    kubernetes \"cluster.local {\n}\n",
			wantErr: []string{"unterminated"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := AddClustersetZone(c.in)
			if c.wantErr != nil {
				if err == nil {
					t.Fatalf("got no error, and:\n%s", got)
				}
				for _, w := range c.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("got:\n%s\nwant:\n%s", got, c.want)
			}
			// Idempotent: a second edit changes nothing.
			again, err := AddClustersetZone(got)
			if err != nil || again != got {
				t.Errorf("a second edit: %v, and:\n%s", err, again)
			}
		})
	}
}

func TestReloads(t *testing.T) {
	for in, want := range map[string]bool{
		kubeadmCorefile: true,
		".:53 {\n    kubernetes cluster.local\n}\n":                                         false,
		".:53 {\n    kubernetes cluster.local\n}\nother:53 {\n    reload\n}\n":              false,
		"other:53 {\n    forward . 1.1.1.1\n}\n.:53 {\n    reload 10s\n    kubernetes\n}\n": true,
	} {
		if got := Reloads(in); got != want {
			t.Errorf("Reloads = %v, want %v:\n%s", got, want, in)
		}
	}
}
