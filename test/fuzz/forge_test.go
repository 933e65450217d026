package fuzz

import (
	"encoding/json"
	"net/netip"
	"reflect"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager/shadowpod"
	"github.com/liqo-go/liqo/pkg/ipam"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
)

// podSeeds are pod specs as JSON: a plain one, one asking for everything
// a provider must not grant, one with tokens and aliases.
var podSeeds = []string{
	`{"terminationGracePeriodSeconds":31536000,"containers":[{"name":"app","image":"busybox","lifecycle":{"preStop":{"sleep":{"seconds":31536000}}},
	  "livenessProbe":{"exec":{"command":["true"]},"terminationGracePeriodSeconds":31536000}}],
	  "initContainers":[{"name":"side","image":"busybox","restartPolicy":"Always","startupProbe":{"exec":{"command":["true"]},"terminationGracePeriodSeconds":31536000}}]}`,
	`{"containers":[{"name":"app","image":"busybox"}]}`,
	`{"nodeName":"cp-0","hostNetwork":true,"hostPID":true,"hostIPC":true,"nodeSelector":{"node-role.kubernetes.io/control-plane":""},
	  "serviceAccountName":"default","automountServiceAccountToken":true,"priorityClassName":"system-node-critical","priority":2000001000,
	  "tolerations":[{"operator":"Exists"},{"key":"virtual-node.liqo.io/not-allowed","operator":"Exists","effect":"NoExecute"}],
	  "affinity":{"nodeAffinity":{}},"containers":[{"name":"app","image":"busybox","env":[{"name":"KUBERNETES_SERVICE_HOST","value":"x"}]}]}`,
	`{"hostAliases":[{"ip":"10.0.0.1","hostnames":["kubernetes.default"]}],"initContainers":[{"name":"i","image":"b"}],
	  "volumes":[{"name":"kube-api-access-x","projected":{"sources":[{"serviceAccountToken":{"path":"token","expirationSeconds":3600}}]}}],
	  "containers":[{"name":"a","image":"b","volumeMounts":[{"name":"kube-api-access-x","mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}]}]}`,
}

func podSpec(t *testing.T, data []byte) (corev1.PodSpec, bool) {
	var spec corev1.PodSpec
	if json.Unmarshal(data, &spec) != nil {
		return spec, false
	}
	return spec, true
}

// FuzzShadowPod: whatever the local pod, the ShadowPod asks for no host
// namespace, node, scheduling constraint of the consumer, priority or
// ServiceAccount of the provider, and no token automounting; the local pod
// is left as it was; with the fabric, the home API server's names resolve
// to the one address given, once.
func FuzzShadowPod(f *testing.F) {
	for _, s := range podSeeds {
		f.Add([]byte(s), uint32(0x0a460001))
	}
	f.Fuzz(func(t *testing.T, data []byte, addr uint32) {
		spec, ok := podSpec(t, data)
		if !ok {
			return
		}
		local := &corev1.Pod{Spec: spec}
		local.Name, local.Namespace = "p", "ns"
		before := local.DeepCopy()
		a := netip.AddrFrom4([4]byte{byte(addr >> 24), byte(addr >> 16), byte(addr >> 8), byte(addr)})
		if addr%5 == 0 {
			a = netip.Addr{} // no fabric
		}
		sp := forge.ShadowPod(local, "rome", "ns-rome", a)
		out := sp.Spec.Pod
		switch {
		case out.HostNetwork || out.HostPID || out.HostIPC:
			t.Fatal("a host namespace reached the provider")
		case out.NodeName != "" || out.NodeSelector != nil || out.Affinity != nil || out.TopologySpreadConstraints != nil:
			t.Fatal("the consumer's scheduling constraints reached the provider")
		case out.ServiceAccountName != "" || out.DeprecatedServiceAccount != "":
			t.Fatal("a ServiceAccount reached the provider")
		case out.AutomountServiceAccountToken == nil || *out.AutomountServiceAccountToken:
			t.Fatal("the provider's token would be mounted")
		case out.PriorityClassName != "" || out.Priority != nil:
			t.Fatal("a priority reached the provider")
		case slices.ContainsFunc(out.Tolerations, func(t corev1.Toleration) bool { return t.Key == consts.VirtualNodeTaintKey }):
			t.Fatal("the virtual node's toleration reached the provider")
		case !reflect.DeepEqual(local, before):
			t.Fatal("the local pod was modified")
		}
		if sp.Labels[consts.OriginClusterIDLabel] != "rome" || sp.Labels[consts.ManagedByLabel] != consts.ManagedByValue {
			t.Fatalf("labels %v", sp.Labels)
		}
		aliases := 0
		for _, h := range out.HostAliases {
			if slices.Contains(h.Hostnames, "kubernetes.default.svc") {
				aliases++
				if h.IP != a.String() {
					t.Fatalf("kubernetes.default.svc at %s, want %s", h.IP, a)
				}
			}
		}
		if a.IsValid() && aliases != 1 {
			t.Fatalf("%d aliases of the API server", aliases)
		}
		for _, c := range slices.Concat(out.InitContainers, out.Containers) {
			seen := map[string]bool{}
			for _, e := range c.Env {
				if e.Name == "KUBERNETES_SERVICE_HOST" && seen[e.Name] && a.IsValid() {
					t.Fatalf("container %s: KUBERNETES_SERVICE_HOST twice", c.Name)
				}
				seen[e.Name] = true
			}
		}
	})
}

// FuzzForgePod: whatever the ShadowPod, the provider's Pod carries our
// labels, is owned by the ShadowPod, mounts no provider token and keeps
// the provider's node selector; host aliases at the consumer's addresses
// are translated into the provider's view, the others kept.
func FuzzForgePod(f *testing.F) {
	for _, s := range podSeeds {
		f.Add([]byte(s), "x", "y")
	}
	m, err := ipam.NewMapping([]string{"10.244.0.0/16", "10.70.0.0/16"}, []string{"10.71.0.0/16", "10.72.0.0/16"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, labelKey, labelValue string) {
		spec, ok := podSpec(t, data)
		if !ok {
			return
		}
		sp := &offv1beta1.ShadowPod{Spec: offv1beta1.ShadowPodSpec{Pod: spec}}
		sp.Name, sp.Namespace, sp.UID = "p", "ns-rome", "uid"
		sp.Labels = map[string]string{labelKey: labelValue, consts.ManagedByLabel: "someone-else"}
		before := sp.DeepCopy()
		pod := shadowpod.ForgePod(sp, shadowpod.PodOptions{NodeSelector: map[string]string{"pool": "consumers"}, MaxGracePeriod: shadowpod.DefaultMaxGracePeriod}, m.Translate)
		if pod.Labels[consts.ManagedByLabel] != consts.ManagedByValue || pod.Labels[shadowpod.ShadowPodLabel] == "" {
			t.Fatalf("labels %v", pod.Labels)
		}
		if pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken {
			t.Fatal("the provider's token would be mounted")
		}
		if pod.Spec.NodeSelector["pool"] != "consumers" {
			t.Fatal("the provider's node selector was lost")
		}
		if len(pod.OwnerReferences) != 1 || pod.OwnerReferences[0].UID != "uid" || pod.OwnerReferences[0].Controller == nil || !*pod.OwnerReferences[0].Controller {
			t.Fatalf("owner references %v", pod.OwnerReferences)
		}
		for i, h := range pod.Spec.HostAliases {
			orig := sp.Spec.Pod.HostAliases[i].IP
			want := orig
			if tr, ok := m.Translate(orig); ok {
				want = tr
			}
			if h.IP != want {
				t.Fatalf("alias %s became %s, want %s", orig, h.IP, want)
			}
		}
		checkGraceCapped(t, &before.Spec.Pod, &pod.Spec, int64(shadowpod.DefaultMaxGracePeriod/time.Second))
		if !reflect.DeepEqual(sp, before) {
			t.Fatal("the ShadowPod was modified")
		}
	})
}

// checkGraceCapped fails unless every period the forged spec can stretch
// its termination with is at most maxSeconds, and the preStop sleeps still
// fit in the pod's grace wherever they did in the ShadowPod's spec (or the
// API server would refuse a pod it admitted before the cap).
func checkGraceCapped(t *testing.T, asked, forged *corev1.PodSpec, maxSeconds int64) {
	t.Helper()
	grace := func(s *corev1.PodSpec) int64 {
		if s.TerminationGracePeriodSeconds != nil {
			return *s.TerminationGracePeriodSeconds
		}
		return 30
	}
	if g := forged.TerminationGracePeriodSeconds; g != nil && *g > maxSeconds {
		t.Fatalf("terminationGracePeriodSeconds %d over the cap %d", *g, maxSeconds)
	}
	sleep := func(c *corev1.Container) (int64, bool) {
		if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil {
			return 0, false
		}
		return c.Lifecycle.PreStop.Sleep.Seconds, true
	}
	all := func(s *corev1.PodSpec) []corev1.Container {
		return append(append([]corev1.Container{}, s.InitContainers...), s.Containers...)
	}
	was := all(asked)
	for i, c := range all(forged) {
		for _, p := range []*corev1.Probe{c.LivenessProbe, c.StartupProbe} {
			if p != nil && p.TerminationGracePeriodSeconds != nil && *p.TerminationGracePeriodSeconds > maxSeconds {
				t.Fatalf("container %q: a probe's grace %d over the cap %d", c.Name, *p.TerminationGracePeriodSeconds, maxSeconds)
			}
		}
		s, ok := sleep(&c)
		if !ok {
			continue
		}
		if s > maxSeconds {
			t.Fatalf("container %q: preStop sleep %d over the cap %d", c.Name, s, maxSeconds)
		}
		if old, _ := sleep(&was[i]); old <= grace(asked) && s > grace(forged) {
			t.Fatalf("container %q: preStop sleep %d past the pod's grace %d", c.Name, s, grace(forged))
		}
	}
}
