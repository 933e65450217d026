package offloading

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
)

func TestRefuseName(t *testing.T) {
	o := TwinOptions{AllowedNames: []string{"shared", "team-*"}}
	tenants := []string{"rome", "west-rome", "milan"}
	cases := []struct {
		name, remote, reason, says string
	}{
		{"own default name", "liqo-demo-rome", "", ""},
		{"own pattern, any prefix", "elsewhere-rome", "", ""},
		{"allow-listed name", "shared", "", ""},
		{"allow-listed pattern", "team-blue", "", ""},
		{"the provider's namespace", "monitoring", ReasonNotAllowed, "--allowed-twin-namespaces"},
		{"another tenant's default name", "liqo-demo-milan", ReasonNotAllowed, "cluster milan"},
		{"a longer tenant id ending in ours", "app-west-rome", ReasonNotAllowed, "cluster west-rome"},
		{"another tenant's name though allow-listed", "team-milan", ReasonNotAllowed, "cluster milan"},
		{"the bare id is no twin name", "rome", ReasonNotAllowed, "--allowed-twin-namespaces"},
		{"a tenant namespace", "liqo-tenant-rome", ReasonNotAllowed, "tenant namespaces"},
		{"a future tenant namespace in our pattern", "liqo-tenant-x-rome", ReasonNotAllowed, "tenant namespaces"},
		{"Kubernetes' prefix, allow-list or not", "kube-foo", ReasonNotAllowed, "kube-*"},
		{"Liqo's prefix", "liqo-foo", ReasonNotAllowed, "liqo-*"},
		{"not a DNS label", "Bad_Name-rome", ReasonInvalidName, "DNS label"},
		{"too long", strings.Repeat("a", 60) + "-rome", ReasonInvalidName, "DNS label"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reason, msg := o.refuseName("rome", c.remote, tenants)
			if reason != c.reason || !strings.Contains(msg, c.says) || (reason != "") != (msg != "") {
				t.Fatalf("refuseName(%q) = %q %q, want %q saying %q", c.remote, reason, msg, c.reason, c.says)
			}
		})
	}
	// The longer tenant may have its own name.
	if reason, msg := o.refuseName("west-rome", "app-west-rome", tenants); reason != "" {
		t.Errorf("west-rome refused its own name: %s", msg)
	}
}

func TestTwinOptionsFlags(t *testing.T) {
	// By default EnforceSameName works: any name that is free and not
	// reserved.
	if o := DefaultTwinOptions(); strings.Join(o.AllowedNames, ",") != "*" || !slices.Contains(o.ReservedNames, "*-system") {
		t.Errorf("defaults: allowed %v, reserved %v", o.AllowedNames, o.ReservedNames)
	}
	o := DefaultTwinOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--allowed-twin-namespaces=shared,team-*", "--reserved-twin-namespaces=payments,team-secret*", "--max-twin-namespaces-per-tenant=7",
		"--twin-namespace-quota=services.nodeports=5,count/shadowpods.offloading.liqo.io=100,pods=500"}); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	nodePorts, pods, shadowPods := o.Quota[corev1.ResourceServicesNodePorts], o.Quota[corev1.ResourcePods], o.Quota["count/shadowpods.offloading.liqo.io"]
	if strings.Join(o.AllowedNames, ",") != "shared,team-*" || strings.Join(o.ReservedNames, ",") != "payments,team-secret*" || o.MaxPerTenant != 7 || nodePorts.Value() != 5 ||
		pods.Value() != 500 || shadowPods.Value() != 100 {
		t.Errorf("parsed %+v", o)
	}
	if q := DefaultTwinQuota()[corev1.ResourceServicesNodePorts]; !q.IsZero() {
		t.Errorf("the flag changed the defaults")
	}
	// A twin's pods are bounded by the tenant's Quota, through the
	// ShadowPod webhook: the default quota leaves them out (the flag adds
	// them, as above).
	if q, ok := DefaultTwinQuota()[corev1.ResourcePods]; ok {
		t.Errorf("the default twin quota counts pods (%s)", q.String())
	}

	bad := []struct{ args, says string }{
		{"--twin-namespace-quota=cpu=4", "not an object count"},
		{"--twin-namespace-quota=pods=-1", "non-negative"},
		{"--twin-namespace-quota=pods=1.5", "whole"},
		{"--twin-namespace-quota=pods", "resource=count"},
		{"--max-twin-namespaces-per-tenant=-1", "--max-twin-namespaces-per-tenant"},
		{"--allowed-twin-namespaces=team-[", "--allowed-twin-namespaces"},
		{"--reserved-twin-namespaces=team-[", "--reserved-twin-namespaces"},
	}
	for _, c := range bad {
		o := DefaultTwinOptions()
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		fs.SetOutput(&strings.Builder{})
		o.AddFlags(fs)
		err := fs.Parse([]string{c.args})
		if err == nil {
			err = o.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want an error saying %q", c.args, err, c.says)
		}
	}
}

func TestConsumerNetworks(t *testing.T) {
	conf := func(remote *netv1beta1.ClusterConfig) netv1beta1.Configuration {
		return netv1beta1.Configuration{Status: netv1beta1.ConfigurationStatus{Remote: remote}}
	}
	got := consumerNetworks([]netv1beta1.Configuration{
		conf(nil), // not configured yet
		conf(&netv1beta1.ClusterConfig{CIDR: netv1beta1.ClusterConfigCIDR{Pod: []netv1beta1.CIDR{"10.71.0.0/16", "not a cidr"}, External: []netv1beta1.CIDR{"10.72.1.9/16"}}}),
		conf(&netv1beta1.ClusterConfig{CIDR: netv1beta1.ClusterConfigCIDR{Pod: []netv1beta1.CIDR{"10.71.0.0/16"}}}),
	})
	if strings.Join(got, ",") != "10.71.0.0/16,10.72.0.0/16" {
		t.Errorf("got %v, want the valid networks, masked, once each", got)
	}
}

// TestTwinQuotaForServiceTypes: allowing NodePort or LoadBalancer Services
// gives each twin a few node ports (and load balancers), since the default
// zero would refuse every Service the provider allows; counts the flag
// names, zero included, are kept; ClusterIP alone keeps the zeros.
func TestTwinQuotaForServiceTypes(t *testing.T) {
	counts := func(o TwinOptions) string {
		np, lb := o.Quota[corev1.ResourceServicesNodePorts], o.Quota[corev1.ResourceServicesLoadBalancers]
		return np.String() + "/" + lb.String()
	}
	withFlag := func(args ...string) TwinOptions {
		o := DefaultTwinOptions()
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return o
	}
	cases := []struct {
		name  string
		o     TwinOptions
		types []string
		want  string
	}{
		{"ClusterIP only", DefaultTwinOptions(), nil, "0/0"},
		{"ExternalName takes no port", DefaultTwinOptions(), []string{"ExternalName"}, "0/0"},
		{"NodePort", DefaultTwinOptions(), []string{"NodePort"}, "10/0"},
		{"LoadBalancer takes node ports too", DefaultTwinOptions(), []string{"LoadBalancer"}, "10/2"},
		{"the flag's counts kept", withFlag("--twin-namespace-quota=services.nodeports=3"), []string{"NodePort", "LoadBalancer"}, "3/2"},
		{"the flag's zero kept", withFlag("--twin-namespace-quota=services.nodeports=0,services.loadbalancers=0"), []string{"LoadBalancer"}, "0/0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := counts(c.o)
			if got := counts(c.o.ForServiceTypes(c.types)); got != c.want {
				t.Errorf("services.nodeports/services.loadbalancers = %s, want %s", got, c.want)
			}
			if counts(c.o) != before {
				t.Errorf("ForServiceTypes changed the options it was given")
			}
		})
	}
}
