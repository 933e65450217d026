package peering

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/liqo-go/liqo/deploy/charts/liqo/files/rbac"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
)

// managerRole is the generated ClusterRole of the controller manager, and
// the name of the ServiceAccount and binding the test gives it.
const managerRole = "liqo-controller-manager"

// TestLeastPrivilege runs the controller managers of rome (consumer) and
// milan (provider) as the chart does: as a ServiceAccount bound to the
// generated liqo-controller-manager ClusterRole and to nothing else. It
// takes them through a peering, an offloaded namespace, a pod that runs on
// milan and reports Running on rome, its logs through the virtual node's
// kubelet API, a Service whose endpoints reach milan, a network connect
// (gateways, keys, IPAM) and reset, and the unpeering. A right the markers
// miss shows as a step that never completes, or as a request the API
// server refused the managers, which fails the test too. On milan the
// consumer acts with the peering ClusterRoles, generated from their
// markers as well.
func TestLeastPrivilege(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var runs []*leastPrivileged
	for _, name := range []string{"rome", "milan"} {
		runs = append(runs, runLeastPrivileged(ctx, t, name))
	}

	const ns, pod = "least-privilege", "hello"
	twin := ns + "-rome"
	peer(t, "rome", "milan")
	unpeered := false
	unpeer := func(ctx context.Context) error {
		out, err := run(ctx, "unpeer", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["milan"])
		if err != nil {
			return fmt.Errorf("unpeer rome -> milan: %w\n%s", err, out)
		}
		unpeered = true
		return nil
	}
	// Unless the last step did.
	t.Cleanup(func() {
		if !unpeered {
			if err := unpeer(context.Background()); err != nil {
				t.Error(err)
			}
		}
	})
	rome, milan := clusterClient(t, "rome"), clusterClient(t, "milan")

	t.Run("an offloaded pod runs on the provider and reports back", func(t *testing.T) {
		createNamespace(t, ns)
		// Deleting the namespace unoffloads it: the twin goes too.
		t.Cleanup(func() {
			_ = tb.Cluster("rome").Client().CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
			harness.Eventually(ctx, t, "the twin namespace gone", func() (bool, error) {
				err := milan.Get(ctx, client.ObjectKey{Name: twin}, &corev1.Namespace{})
				return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
			})
		})
		if out, err := run(ctx, "offload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"], "--timeout", "60s"); err != nil {
			t.Fatalf("liqoctl offload: %v\n%s", err, out)
		}
		checkTwin(t, "milan", twin)
		offloaded := helloPod(ns, pod, pod, corev1.NodeSelectorOpIn)
		// And one on rome's own nodes, which the Service's endpoints on
		// milan get through a ShadowEndpointSlice.
		local := helloPod(ns, pod+"-local", pod, corev1.NodeSelectorOpNotIn)
		for _, p := range []*corev1.Pod{offloaded, local} {
			if err := rome.Create(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		// Running on both sides, with the remote address (no network
		// fabric: no remapping).
		_, remote, provider := waitOffloaded(ctx, t, rome, ns, pod)
		if provider != "milan" || remote.Namespace != twin {
			t.Fatalf("the pod runs on %s in %s, want milan in %s", provider, remote.Namespace, twin)
		}
		// kubectl logs: the API server calls the kubelet API, which
		// authorizes the call and finds the remote pod.
		if logs, want := kubectl(t, "rome", "", "logs", pod, "-n", ns), tb.Cluster("milan").PodLogLine(); !strings.Contains(logs, want) {
			t.Errorf("kubectl logs printed %q, want the remote pod's line %q", logs, want)
		}

		// A Service: reflected to milan, where its endpoints are milan's
		// pod (milan's own slice) and rome's (the reflected one).
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: ns},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": pod},
				Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}}}
		if err := rome.Create(ctx, svc); err != nil {
			t.Fatal(err)
		}
		// milan keeps rome's endpoints once it knows rome's networks.
		networkInit(ctx, t, "rome", "milan")
		var last string
		harness.Eventually(ctx, t, "the Service's endpoints on milan", func() (bool, error) {
			if err := rome.Get(ctx, client.ObjectKeyFromObject(local), local); err != nil || local.Status.PodIP == "" {
				return false, err
			}
			localOnMilan, err := seenFrom(ctx, milan, "rome", []string{local.Status.PodIP})
			if err != nil {
				return false, err
			}
			native, reflected, err := endpoints(ctx, milan, twin, pod)
			last = fmt.Sprintf("native %v, reflected %v; pods %s (milan), %s (rome, %v on milan)", native, reflected, remote.Status.PodIP, local.Status.PodIP, localOnMilan)
			return slices.Equal(native, []string{remote.Status.PodIP}) && len(localOnMilan) == 1 &&
				slices.Equal(reflected, localOnMilan), err
		})
		t.Log(last)
	})

	t.Run("network connect and reset", func(t *testing.T) {
		args := []string{"--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["milan"], "--timeout", "90s"}
		out, err := run(ctx, append([]string{"network", "connect", "--server-service-type", "NodePort", "--wait=false"}, args...)...)
		if err != nil {
			t.Fatalf("network connect: %v\n%s", err, out)
		}
		for _, step := range []string{"remapped", "Gateway server ready", "Gateway client ready", "Public keys exchanged"} {
			if !strings.Contains(out, step) {
				t.Errorf("the output does not say %q:\n%s", step, out)
			}
		}
		for _, cmd := range []string{"disconnect", "reset"} {
			if out, err := run(ctx, append([]string{"network", cmd}, args...)...); err != nil {
				t.Fatalf("network %s: %v\n%s", cmd, err, out)
			}
		}
	})

	t.Run("unpeer", func(t *testing.T) {
		if err := unpeer(ctx); err != nil {
			t.Fatal(err)
		}
		harness.Eventually(ctx, t, "the virtual node gone", func() (bool, error) {
			err := rome.Get(ctx, client.ObjectKey{Name: "milan"}, &corev1.Node{})
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
	})

	for _, r := range runs {
		r.check(t)
	}
}

// helloPod is a pod labelled app that runs on a virtual node (op In) or on
// the cluster's own nodes (op NotIn).
func helloPod(ns, name, app string, op corev1.NodeSelectorOperator) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
					{Key: consts.TypeLabel, Operator: op, Values: []string{consts.TypeVirtualNode}}}}}}}},
			Tolerations: []corev1.Toleration{{Key: consts.VirtualNodeTaintKey, Operator: corev1.TolerationOpExists,
				Effect: corev1.TaintEffectNoExecute}},
			Containers: []corev1.Container{{Name: "app", Image: "busybox", Command: []string{"sh", "-c", "sleep 3600"},
				Ports: []corev1.ContainerPort{{ContainerPort: 8080}}}},
		}}
}

// leastPrivileged is a controller manager run as the ServiceAccount bound
// to the generated ClusterRole.
type leastPrivileged struct {
	cluster, log, user string
	// shared is the process's shared log, sharedFrom its size when the
	// manager started.
	shared     string
	sharedFrom int64
	mu         sync.Mutex
	// errs stopped the manager; refused are the requests the API server
	// answered 403 Forbidden, whatever logged them (or did not).
	errs, refused []string
}

// record is a WrapTransport noting every request of the manager that the
// API server refused. A namespace being deleted refuses new objects with a
// Forbidden that is no missing right.
func (r *leastPrivileged) record(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err != nil || resp.StatusCode != http.StatusForbidden {
			return resp, err
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if !bytes.Contains(body, []byte("because it is being terminated")) {
			r.mu.Lock()
			r.refused = append(r.refused, req.Method+" "+req.URL.RequestURI())
			r.mu.Unlock()
		}
		return resp, nil
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// runLeastPrivileged replaces the cluster's controller manager with one
// that authenticates as a ServiceAccount bound only to the generated
// liqo-controller-manager ClusterRole, until the test ends.
func runLeastPrivileged(ctx context.Context, t *testing.T, name string) *leastPrivileged {
	t.Helper()
	cl := tb.Cluster(name)
	dir := filepath.Dir(kubeconfigs[name]) // the package's log directory
	r := &leastPrivileged{cluster: name, user: serviceAccountUser(), log: filepath.Join(dir, name+"-least-privilege.log"),
		shared: filepath.Join(dir, "shared.log")}
	if fi, err := os.Stat(r.shared); err == nil {
		r.sharedFrom = fi.Size()
	}
	cfg := managerCredentials(ctx, t, cl)
	// Every client of the manager on this cluster is built from cfg: its
	// copies keep the wrapper.
	cfg.WrapTransport = r.record
	f, err := os.OpenFile(r.log, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	// The same options as the package's managers (startManager) but for
	// the credentials: Run, not RunLocal, which installs the CRDs the chart
	// installs in the cluster.
	o := controllermanager.DefaultOptions()
	o.ClusterID, o.SelfProvision = name, true
	for _, c := range clusters {
		if c.name == name {
			o.ClusterLabels, o.SlicePolicy = c.labels, c.policy
		}
	}
	o.HealthCheckInterval, o.ProviderUnreachableGrace = time.Second, testGrace
	o.IPAM.PodCIDR = netip.MustParsePrefix("10.244.0.0/16")
	o.Logger = zap.New(zap.WriteTo(f), zap.UseDevMode(true))

	stopManagers[name]()
	mctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer f.Close()
		for backoff := time.Second; ; backoff = min(2*backoff, 10*time.Second) {
			err := controllermanager.Run(mctx, cfg, o)
			if mctx.Err() != nil {
				return
			}
			o.Logger.Error(err, "controller manager stopped; restarting")
			r.mu.Lock()
			r.errs = append(r.errs, err.Error())
			r.mu.Unlock()
			select {
			case <-mctx.Done():
				return
			case <-time.After(backoff):
			}
		}
	}()
	stopManagers[name] = func() { stop(); <-done }
	// Back to the package's manager, once the test's own cleanups (the
	// unpeering) are done.
	t.Cleanup(func() {
		stopManagers[name]()
		startManagers[name]()
		waitManager(name)
		cs := cl.Client()
		_ = cs.RbacV1().ClusterRoleBindings().Delete(context.Background(), managerRole, metav1.DeleteOptions{})
		_ = cs.CoreV1().ServiceAccounts(consts.DefaultNamespace).Delete(context.Background(), managerRole, metav1.DeleteOptions{})
	})
	waitManager(name)
	return r
}

// check fails the test on every error that stopped the manager, every
// request of it the API server refused, and every line of its log and of
// the shared client log that tells of a refusal (the provider's to the
// consumer's credentials included).
func (r *leastPrivileged) check(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	for _, err := range r.errs {
		t.Errorf("the controller manager of %s stopped: %s", r.cluster, err)
	}
	for _, req := range slices.Compact(slices.Sorted(slices.Values(r.refused))) {
		t.Errorf("the controller manager of %s was refused %s", r.cluster, req)
	}
	r.mu.Unlock()
	// The shared log holds client-go's for every manager of the process
	// (watches refused, with the user named): what was written since this
	// manager started, about its two users, the local ServiceAccount and
	// its consumer user on its providers.
	consumer := consts.ConsumerUser(r.cluster)
	for _, f := range []struct {
		path string
		from int64
		keep func(string) bool
	}{
		{r.log, 0, func(string) bool { return true }},
		{r.shared, r.sharedFrom, func(line string) bool {
			return strings.Contains(line, r.user) || strings.Contains(line, `"`+consumer+`"`)
		}},
	} {
		file, err := os.Open(f.path)
		if err != nil {
			t.Error(err)
			continue
		}
		if _, err := file.Seek(f.from, io.SeekStart); err != nil {
			t.Error(err)
		}
		sc := bufio.NewScanner(file)
		sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
		for sc.Scan() {
			line := sc.Text()
			if strings.Contains(strings.ToLower(line), "forbidden") && !strings.Contains(line, "because it is being terminated") && f.keep(line) {
				t.Errorf("%s: %s", filepath.Base(f.path), line)
			}
		}
		_ = file.Close()
	}
}

// serviceAccountUser is the user the managers run as.
func serviceAccountUser() string {
	return "system:serviceaccount:" + consts.DefaultNamespace + ":" + managerRole
}

// managerCredentials installs the generated ClusterRole on cl, binds it
// (and nothing else) to a ServiceAccount, and returns a configuration that
// authenticates as that ServiceAccount once the binding is in force.
func managerCredentials(ctx context.Context, t *testing.T, cl *testbed.Cluster) *rest.Config {
	t.Helper()
	cs := cl.Client()
	role, err := rbac.ClusterRole(managerRole)
	if err != nil {
		t.Fatal(err)
	}
	if old, err := cs.RbacV1().ClusterRoles().Get(ctx, managerRole, metav1.GetOptions{}); err == nil {
		old.Rules = role.Rules
		_, err = cs.RbacV1().ClusterRoles().Update(ctx, old, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	} else if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: managerRole, Namespace: consts.DefaultNamespace}}
	if _, err := cs.CoreV1().ServiceAccounts(sa.Namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: managerRole},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: managerRole},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: sa.Namespace}}}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(sa.Namespace).CreateToken(ctx, sa.Name,
		&authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(2 * 60 * 60))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.AnonymousClientConfig(cl.Config)
	cfg.BearerToken = tr.Status.Token
	who, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || who.Status.UserInfo.Username != serviceAccountUser() {
		t.Fatalf("the token authenticates as %+v (%v), want %s", who, err, serviceAccountUser())
	}
	// The authorizer sees a new binding shortly after it is written.
	harness.Eventually(ctx, t, "the binding of "+managerRole+" in force on "+cl.Name, func() (bool, error) {
		return allowedTo(ctx, cs, "approve", "certificates.k8s.io", "signers", "kubernetes.io/kubelet-serving")
	})
	// Nothing but that binding: no way to cluster-admin.
	if ok, err := allowedTo(ctx, cs, "bind", rbacv1.GroupName, "clusterroles", "cluster-admin"); err != nil || ok {
		t.Fatalf("the ServiceAccount may bind cluster-admin (%v)", err)
	}
	return cfg
}

// allowedTo asks cs's authorizer whether the managers' ServiceAccount may
// verb the resource (resource/subresource) of group, by name if given.
func allowedTo(ctx context.Context, cs kubernetes.Interface, verb, group, resource, name string) (bool, error) {
	res, sub, _ := strings.Cut(resource, "/")
	sar := &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
		User:               serviceAccountUser(),
		Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + consts.DefaultNamespace, "system:authenticated"},
		ResourceAttributes: &authzv1.ResourceAttributes{Verb: verb, Group: group, Resource: res, Subresource: sub, Name: name},
	}}
	got, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return got.Status.Allowed, nil
}
