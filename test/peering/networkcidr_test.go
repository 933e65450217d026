package peering

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/fabric"
	"github.com/liqo-go/liqo/test/harness"
)

// TestHostileNetworkCIDRs: a consumer's peering user on milan (the rights
// a consumer's administrator peers with) writes the Configuration of its
// own cluster, which it may, announcing networks that are not its pods':
// the cloud metadata service, the upper half of the address space, the
// internet, loopback. Milan refuses each with a condition and an Event
// naming the rule, and nothing is left for the node agent to route; a
// private network is then configured again.
func TestHostileNetworkCIDRs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const consumer = "trudy"
	tenantNS := consts.TenantNamespace(consumer)
	kc := filepath.Join(t.TempDir(), consumer+"-on-milan.kubeconfig")
	if out, err := run(ctx, "generate", "peering-user", "--consumer-cluster-id", consumer, "--output", kc, "--kubeconfig", kubeconfigs["milan"]); err != nil {
		t.Fatalf("generate peering-user: %v\n%s", err, out)
	}
	t.Cleanup(func() { cleanPeeringUsers(t, consumer) })
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	user, milan := userClient(t, cfg), clusterClient(t, "milan")
	key := types.NamespacedName{Namespace: tenantNS, Name: consumer}

	// write sets the announced networks with the user's rights, and
	// returns the generation the IPAM must answer.
	write := func(pod, external string) int64 {
		t.Helper()
		var conf netv1beta1.Configuration
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			err := user.Get(ctx, key, &conf)
			if client.IgnoreNotFound(err) != nil {
				return err
			}
			conf.Spec.Remote.CIDR = netv1beta1.ClusterConfigCIDR{Pod: []netv1beta1.CIDR{netv1beta1.CIDR(pod)}, External: []netv1beta1.CIDR{netv1beta1.CIDR(external)}}
			if err != nil {
				conf.ObjectMeta = metav1.ObjectMeta{Name: consumer, Namespace: tenantNS, Labels: map[string]string{consts.RemoteClusterIDLabel: consumer}}
				return user.Create(ctx, &conf)
			}
			return user.Update(ctx, &conf)
		})
		if err != nil {
			t.Fatalf("the peering user writing its Configuration (pod %s, external %s): %v", pod, external, err)
		}
		return conf.Generation
	}
	// answered waits for the IPAM's condition on generation gen or a
	// later one (the IPAM writes spec.local once, a generation of its own).
	answered := func(gen int64) (*netv1beta1.Configuration, *metav1.Condition) {
		t.Helper()
		var conf netv1beta1.Configuration
		var cond *metav1.Condition
		harness.Eventually(ctx, t, fmt.Sprintf("the IPAM's answer to generation %d", gen), func() (bool, error) {
			if err := milan.Get(ctx, key, &conf); err != nil {
				return false, err
			}
			cond = meta.FindStatusCondition(conf.Status.Conditions, netv1beta1.NetworkCIDRsConfiguredCondition)
			// The label follows the condition in a write of its own.
			labelled := (conf.Labels[netv1beta1.ConfiguredLabel] == "true") == (cond != nil && cond.Status == metav1.ConditionTrue)
			return cond != nil && cond.ObservedGeneration >= gen && cond.ObservedGeneration == conf.Generation && cond.Reason != netv1beta1.ConfigurationReasonWaiting && labelled, nil
		})
		return &conf, cond
	}
	// routed is what milan's node agent routes to the consumer's gateway
	// from this Configuration.
	routed := func(conf *netv1beta1.Configuration) []string {
		ip := netv1beta1.IP("10.244.0.5")
		g, err := fabric.GatewayFrom(tenantNS+"/gw", "uid", &netv1beta1.InternalGatewayEndpoint{IP: &ip}, conf)
		if err != nil {
			t.Errorf("the node agent refuses the Configuration: %v", err)
		}
		var out []string
		for _, p := range g.Remotes {
			out = append(out, p.String())
		}
		return out
	}

	// The legitimate case first: the same pod CIDR as milan's, remapped.
	if conf, cond := answered(write("10.244.0.0/16", "10.70.0.0/16")); cond.Status != metav1.ConditionTrue || len(routed(conf)) != 2 {
		t.Fatalf("a private announcement: condition %+v, routed %v; want it configured", cond, routed(conf))
	}

	for _, tc := range []struct {
		what, pod, external, bad, says string
	}{
		{"the cloud metadata service", "10.244.0.0/16", "169.254.169.254/32", "169.254.169.254/32", "link-local"},
		{"the upper half of the address space", "10.244.0.0/16", "128.0.0.0/1", "128.0.0.0/1", "wider than /8"},
		{"the internet's DNS", "8.8.8.0/24", "10.70.0.0/16", "8.8.8.0/24", "not inside a private range"},
		{"loopback", "10.244.0.0/16", "127.0.0.0/8", "127.0.0.0/8", "loopback"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			gen := write(tc.pod, tc.external)
			conf, cond := answered(gen)
			if cond.Status != metav1.ConditionFalse || cond.Reason != netv1beta1.ConfigurationReasonRemoteRefused || !strings.Contains(cond.Message, tc.says) {
				t.Errorf("condition %+v; want False, %s, saying %q", cond, netv1beta1.ConfigurationReasonRemoteRefused, tc.says)
			}
			if conf.Status.Remote != nil || conf.Labels[netv1beta1.ConfiguredLabel] == "true" {
				t.Errorf("status.remote %+v, label %q: want nothing remapped", conf.Status.Remote, conf.Labels[netv1beta1.ConfiguredLabel])
			}
			if r := routed(conf); len(r) != 0 {
				t.Errorf("the node agent would route %v to the consumer", r)
			}
			harness.Eventually(ctx, t, "an Event naming the rule", func() (bool, error) {
				var events corev1.EventList
				if err := milan.List(ctx, &events, client.InNamespace(tenantNS)); err != nil {
					return false, err
				}
				for _, e := range events.Items {
					if e.InvolvedObject.Name == consumer && e.InvolvedObject.Kind == "Configuration" && e.Type == corev1.EventTypeWarning &&
						e.Reason == netv1beta1.ConfigurationReasonRemoteRefused && strings.Contains(e.Message, tc.bad) && strings.Contains(e.Message, tc.says) {
						return true, nil
					}
				}
				return false, nil
			})
			// Back to private networks between attacks, so that each
			// refusal is a change of condition (an Event of its own).
			if _, cond := answered(write("10.244.0.0/16", "10.70.0.0/16")); cond.Status != metav1.ConditionTrue {
				t.Fatalf("private again: condition %+v", cond)
			}
		})
	}
}
