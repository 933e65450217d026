package networking

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	gwctrl "github.com/liqo-go/liqo/pkg/controllermanager/gateway"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
	"github.com/liqo-go/liqo/test/realpods"
)

// TestGatewayFailover: both gateways of a peering (milan's server, rome's
// client) run two replicas, as --enable-ha makes them: exactly one of each
// holds the gateway's Lease, carries the tunnel and is labelled active
// (the Service selects it, the nodes route to it), and both are Ready.
// Deleting the active replica hands the tunnel to another, and a rome pod
// reaches a milan pod again; first on the server's side, then on the
// client's. The takeover times are logged.
func TestGatewayFailover(t *testing.T) {
	ctx := realpods.Timeout(t, 10*time.Minute)
	args := []string{"--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["milan"]}
	if out, err := liqoctlRun(ctx, append([]string{"network", "connect", "--server-service-type", "NodePort", "--timeout", "5m"}, args...)...); err != nil {
		t.Fatalf("network connect: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if out, err := liqoctlRun(ctx, append([]string{"network", "reset"}, args...)...); err != nil {
			t.Errorf("network reset: %v\n%s", err, out)
		}
		nothingLeftOnNodes(ctx, t, rome, milan)
	})
	// milan serves rome (GatewayServer "rome"), rome dials milan
	// (GatewayClient "milan").
	gateways := []gatewayRef{{c: milan, ns: consts.TenantNamespace("rome"), name: "rome"}, {c: rome, ns: consts.TenantNamespace("milan"), name: "milan"}}
	for _, g := range gateways {
		scale := []byte(`{"spec":{"replicas":2}}`)
		if _, err := g.c.Client().AppsV1().Deployments(g.ns).Patch(ctx, consts.GatewayResourceName(g.name), types.MergePatchType, scale, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range gateways {
		active, standby := g.oneActive(ctx, t, "")
		g.unprivileged(ctx, t, active, standby)
	}

	ns := realpods.Namespace(ctx, t, milan, "failover")
	realpods.DeployWeb(ctx, t, milan, ns, 1, 0)
	web := realpods.RunningPods(ctx, t, milan, ns, "app=web", 1)[0]
	clientNS := realpods.Namespace(ctx, t, rome, "failover")
	client := realpods.Client(ctx, t, rome, clientNS, "")
	url := "http://" + remapped(ctx, t, rome, "milan", web.Status.PodIP) + ":8080/"
	if got := realpods.Fetch(ctx, t, rome, clientNS, client, url); got != web.Name {
		t.Fatalf("before any failover, %s gave %q, want %s", url, got, web.Name)
	}

	for _, g := range gateways {
		active, standby := g.oneActive(ctx, t, "")
		start := time.Now()
		if err := g.c.Client().CoreV1().Pods(g.ns).Delete(ctx, active, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		// The replica standing by, or the deleted one's replacement if it
		// asked for the Lease first: either way not the one deleted.
		now := g.takenOver(ctx, t, active)
		took := time.Since(start)
		if got := realpods.Fetch(ctx, t, rome, clientNS, client, url); got != web.Name {
			t.Fatalf("after %s's gateway failover, %s gave %q, want %s", g.c.Name, url, got, web.Name)
		}
		t.Logf("%s's gateway: %s active %s after deleting %s (%s was standing by); rome's pod reached milan's again after %s",
			g.c.Name, now, took.Round(100*time.Millisecond), active, standby, time.Since(start).Round(100*time.Millisecond))
		// The replacement of the deleted replica stands by, Ready.
		g.oneActive(ctx, t, active)
	}
}

// takenOver waits until a replica other than gone is labelled active, and
// returns its name.
func (g gatewayRef) takenOver(ctx context.Context, t *testing.T, gone string) string {
	t.Helper()
	var active string
	harness.Eventually(ctx, t, fmt.Sprintf("%s: a replica of gateway %s other than %s active", g.c.Name, g.name, gone), func() (bool, error) {
		pods, err := g.c.Client().CoreV1().Pods(g.ns).List(ctx, metav1.ListOptions{
			LabelSelector: gwctrl.ComponentLabel + "=" + gwctrl.ComponentValue + "," + netv1beta1.GatewayActiveLabel + "=true"})
		if err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if p.Name != gone && p.DeletionTimestamp.IsZero() {
				active = p.Name
				return true, nil
			}
		}
		return false, nil
	})
	return active
}

// gatewayRef is one gateway of a peering, in cluster c.
type gatewayRef struct {
	c        *testbed.Cluster
	ns, name string
}

// oneActive waits until the gateway has two Ready replicas (not counting
// gone, the name of one being deleted), exactly one of them labelled
// active, and returns the active one's name and the other's.
func (g gatewayRef) oneActive(ctx context.Context, t *testing.T, gone string) (active, standby string) {
	t.Helper()
	harness.Eventually(ctx, t, fmt.Sprintf("%s: gateway %s with one active and one standby replica, both Ready", g.c.Name, g.name), func() (bool, error) {
		pods, err := g.c.Client().CoreV1().Pods(g.ns).List(ctx, metav1.ListOptions{LabelSelector: gwctrl.ComponentLabel + "=" + gwctrl.ComponentValue})
		if err != nil {
			return false, err
		}
		var actives, standbys []string
		for _, p := range pods.Items {
			if p.Name == gone || !p.DeletionTimestamp.IsZero() {
				continue
			}
			if p.Status.Phase != corev1.PodRunning || !realpods.PodReady(&p) {
				return false, fmt.Errorf("pod %s not Ready", p.Name)
			}
			if p.Labels[netv1beta1.GatewayActiveLabel] == "true" {
				actives = append(actives, p.Name)
			} else {
				standbys = append(standbys, p.Name)
			}
		}
		if len(actives) != 1 || len(standbys) != 1 {
			return false, fmt.Errorf("active %v, standing by %v", actives, standbys)
		}
		active, standby = actives[0], standbys[0]
		return true, nil
	})
	return active, standby
}

// unprivileged checks that the gateway's pods run without privileges: as
// forged (not privileged, every capability dropped but
// gwctrl.Capabilities, no privilege escalation, read-only root), and as
// the kernel sees their process on the node — its effective, permitted and
// bounding capability sets hold exactly gwctrl.Capabilities, no_new_privs
// is set and a seccomp filter applies. The active replica has opened the
// tunnel and set up its namespace with these rights alone.
func (g gatewayRef) unprivileged(ctx context.Context, t *testing.T, pods ...string) {
	t.Helper()
	bits := map[corev1.Capability]uint{"NET_ADMIN": unix.CAP_NET_ADMIN, "MKNOD": unix.CAP_MKNOD}
	var want uint64
	for _, c := range gwctrl.Capabilities {
		b, ok := bits[c]
		if !ok {
			t.Fatalf("capability %s has no bit in this test", c)
		}
		want |= 1 << b
	}
	for _, name := range pods {
		p, err := g.c.Client().CoreV1().Pods(g.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sc := p.Spec.Containers[0].SecurityContext
		if sc == nil || ptr.Deref(sc.Privileged, false) || !ptr.Deref(sc.ReadOnlyRootFilesystem, false) ||
			ptr.Deref(sc.AllowPrivilegeEscalation, true) || sc.Capabilities == nil ||
			!slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || !slices.Equal(sc.Capabilities.Add, gwctrl.Capabilities) {
			t.Fatalf("%s: gateway pod %s has security context %+v", g.c.Name, name, sc)
		}
		status := processStatus(t, g.ns, name)
		for _, f := range []string{"CapEff", "CapPrm", "CapBnd"} {
			got, err := strconv.ParseUint(status[f], 16, 64)
			if err != nil || got != want {
				t.Errorf("%s: gateway pod %s's process has %s %q, want %x (%v)", g.c.Name, name, f, status[f], want, gwctrl.Capabilities)
			}
		}
		if status["NoNewPrivs"] != "1" || status["Seccomp"] != "2" {
			t.Errorf("%s: gateway pod %s's process has NoNewPrivs %q and Seccomp %q, want 1 and 2 (filter)", g.c.Name, name, status["NoNewPrivs"], status["Seccomp"])
		}
	}
}

// processStatus finds the one process on this machine (the testbed's
// nodes share its PID namespace view through /proc) whose environment
// names pod ns/name, and returns the fields of its /proc/PID/status.
func processStatus(t *testing.T, ns, name string) map[string]string {
	t.Helper()
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		if err != nil {
			continue // gone, or a kernel thread
		}
		vars := strings.Split(string(env), "\x00")
		if slices.Contains(vars, "POD_NAME="+name) && slices.Contains(vars, "POD_NAMESPACE="+ns) {
			found = append(found, d.Name())
		}
	}
	if len(found) != 1 {
		t.Fatalf("processes of pod %s/%s: %v, want one", ns, name, found)
	}
	b, err := os.ReadFile(filepath.Join("/proc", found[0], "status"))
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			fields[k] = strings.TrimSpace(v)
		}
	}
	return fields
}
