package testnet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"k8s.io/kubectl/pkg/util/podutils"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	kwait "k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
	"github.com/liqo-go/liqo/pkg/wait"
)

const (
	// serverLabel tells the test pods apart, and their Services select by
	// it: a recommended application label, which providers admit on
	// offloaded pods (a domain-prefixed one of ours would be refused).
	serverLabel = "app.kubernetes.io/instance"
	port        = 8080
)

// server is one test pod: a web server on a local node or on a virtual
// node, or (hostNetwork) the client that checks from a local node itself.
type server struct {
	name string
	// where says where it runs, for the report: "local", the virtual
	// node's name, or the local node's for the host-network client.
	where string
	local bool
	// hostNetwork: the pod runs in its node's network namespace, as the
	// node's own processes do; it serves nothing.
	hostNetwork bool
	ip          string
}

// Ways a check reaches its target, the columns of the report.
const (
	viaPodIP   = "pod IP"
	viaService = "Service"
)

// check is one cell of the report.
type check struct {
	from, to, via string
	err           error
}

// Run deploys the servers, runs every check and reports.
func (o *Options) Run(ctx context.Context) error {
	if err := o.Local.Connect(ctx, min(o.Timeout, 10*time.Second)); err != nil {
		return err
	}
	if _, err := o.Local.FindComponents(ctx); err != nil {
		return err
	}
	vnodes, providers, err := o.virtualNodes(ctx)
	if err != nil {
		return err
	}
	if len(vnodes) == 0 {
		return fmt.Errorf("the local cluster has no virtual node: peer it with a provider first (liqoctl peer)")
	}
	if o.Info {
		o.printInfo(ctx, providers)
	}
	if o.localNodes, err = o.containerNodes(ctx); err != nil {
		return err
	}
	if o.Remove {
		defer o.cleanup()
	}
	start := time.Now()
	servers, err := o.deploy(ctx, vnodes)
	if err != nil {
		return err
	}
	o.out.Timed(start, "Test pods running: one local, one on each of %s", strings.Join(vnodes, ", "))

	var checks []check
	for _, from := range servers {
		for _, to := range servers {
			// Each provider is joined to the consumer, not to the other
			// providers: a remote pod is checked against the local one.
			if from.name == to.name || to.hostNetwork || (!from.local && !to.local) || (from.hostNetwork && to.local) {
				continue
			}
			if from.local {
				// The addresses the local cluster shows are its own view:
				// they are checked from the local pods (and node).
				checks = append(checks, o.run(ctx, from, to, viaPodIP, fmt.Sprintf("http://%s:%d/", to.ip, port)))
			}
			if !o.Basic && !from.hostNetwork {
				checks = append(checks, o.run(ctx, from, to, viaService, "http://"+to.name+"/"))
			}
			if o.FailFast && len(checks) > 0 && checks[len(checks)-1].err != nil {
				break
			}
		}
	}
	var failed []string
	for _, c := range checks {
		if c.err != nil {
			failed = append(failed, fmt.Sprintf("%s → %s (%s)", c.from, c.to, c.via))
			o.out.Info("%s → %s (%s) failed: %v", c.from, c.to, c.via, c.err)
		}
	}
	o.out.Info("Results:\n%s", matrix(checks))
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d checks failed: %s", len(failed), len(checks), strings.Join(failed, "; "))
	}
	o.out.Info("All %d checks passed", len(checks))
	return nil
}

// matrix renders the checks as a table: a row per source and target, a
// column per way of reaching it.
func matrix(checks []check) string {
	type pair struct{ from, to string }
	var rows []pair
	cells := map[pair]map[string]string{}
	for _, c := range checks {
		k := pair{c.from, c.to}
		if cells[k] == nil {
			cells[k] = map[string]string{}
			rows = append(rows, k)
		}
		cells[k][c.via] = "OK"
		if c.err != nil {
			cells[k][c.via] = "FAILED"
		}
	}
	cell := func(r pair, via string) string {
		if v, ok := cells[r][via]; ok {
			return v
		}
		return "-"
	}
	table := make([][]string, 0, len(rows))
	for _, r := range rows {
		table = append(table, []string{r.from, r.to, cell(r, viaPodIP), cell(r, viaService)})
	}
	var b strings.Builder
	_ = output.Table(&b, []string{"from", "to", viaPodIP, viaService}, table)
	return strings.TrimRight(b.String(), "\n")
}

// kwokNodeAnnotation marks the nodes kwok simulates: their pods only
// pretend to run, and an exec in them runs on kwok's host, outside every
// cluster network, so no check can run there.
const kwokNodeAnnotation = "kwok.x-k8s.io/node"

// containerNodes lists the local nodes the local test pods may run on: the
// ones that run containers (not virtual, not simulated by kwok).
func (o *Options) containerNodes(ctx context.Context) ([]string, error) {
	var nodes corev1.NodeList
	if err := o.Local.Client.List(ctx, &nodes); err != nil {
		return nil, fmt.Errorf("listing the nodes: %w", err)
	}
	var out, simulated []string
	for _, n := range nodes.Items {
		switch {
		case n.Labels[consts.TypeLabel] == consts.TypeVirtualNode:
		case n.Annotations[kwokNodeAnnotation] != "":
			simulated = append(simulated, n.Name)
		default:
			out = append(out, n.Name)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the local cluster has no node that runs containers (%d simulated by kwok: %s): the local test pods would not run",
			len(simulated), strings.Join(simulated, ", "))
	}
	sort.Strings(out)
	return out, nil
}

// label makes a name usable as a pod or Service name.
func label(s string) string {
	s = strings.ToLower(s)
	if len(s) > 40 {
		s = s[:40]
	}
	return strings.Trim(s, "-.")
}

// deploy creates the namespace, offloads it, and runs one server locally
// and one per virtual node, each with its own Service.
func (o *Options) deploy(ctx context.Context, vnodes []string) ([]*server, error) {
	c := o.Local.Client
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: Namespace + "-",
		Labels: map[string]string{consts.ManagedByLabel: consts.ManagedByValue}}}
	if err := c.Create(ctx, ns); err != nil {
		return nil, fmt.Errorf("creating the test namespace: %w", err)
	}
	o.namespace = ns.Name
	o.out.Info("Testing in namespace %s", o.namespace)
	nsof := &offv1beta1.NamespaceOffloading{ObjectMeta: metav1.ObjectMeta{Name: offv1beta1.NamespaceOffloadingName, Namespace: o.namespace},
		Spec: offv1beta1.NamespaceOffloadingSpec{NamespaceMappingStrategy: offv1beta1.DefaultNameMappingStrategy,
			PodOffloadingStrategy: offv1beta1.LocalAndRemotePodOffloadingStrategy}}
	if err := c.Create(ctx, nsof); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("offloading namespace %s: %w", o.namespace, err)
	}
	if err := wait.For(ctx, c, client.ObjectKeyFromObject(nsof), nsof, "namespace "+o.namespace+" to be offloaded", func(n *offv1beta1.NamespaceOffloading) error {
		if n.Status.OffloadingPhase != offv1beta1.ReadyOffloadingPhase {
			return wait.NotYet("offloading phase %q", n.Status.OffloadingPhase)
		}
		return nil
	}); err != nil {
		return nil, err
	}

	servers := []*server{{name: "local", where: "local", local: true}}
	if !o.Basic {
		servers = append(servers, &server{name: "local-node", where: "local node", local: true, hostNetwork: true})
	}
	for _, vn := range vnodes {
		servers = append(servers, &server{name: "remote-" + label(vn), where: vn})
	}
	for _, s := range servers {
		if err := o.create(ctx, s); err != nil {
			return nil, err
		}
	}
	for _, s := range servers {
		var p corev1.Pod
		err := wait.For(ctx, c, types.NamespacedName{Namespace: o.namespace, Name: s.name}, &p, "pod "+s.name+" to be ready", func(p *corev1.Pod) error {
			if p.Status.PodIP == "" || !podutils.IsPodReady(p) {
				return wait.NotYet("pod %s is %s", p.Name, p.Status.Phase)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		s.ip = p.Status.PodIP
		if s.hostNetwork {
			s.where = "node " + p.Spec.NodeName
		}
	}
	return servers, nil
}

// create runs server s and its Service.
func (o *Options) create(ctx context.Context, s *server) error {
	labels := map[string]string{serverLabel: s.name, "app.kubernetes.io/name": "liqo-test-network"}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: o.namespace, Labels: labels},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{
				Name: "web", Image: o.Image,
				Command: []string{"sh", "-c", fmt.Sprintf("mkdir -p /www && hostname > /www/index.html && exec httpd -f -p %d -h /www", port)},
				Ports:   []corev1.ContainerPort{{ContainerPort: port}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(port)}},
					PeriodSeconds: 1},
			}},
		},
	}
	if s.hostNetwork {
		// The node's own network namespace: a client, serving nothing (its
		// port would be the node's).
		pod.Spec.HostNetwork = true
		pod.Spec.Containers[0].Command = []string{"sleep", "3600"}
		pod.Spec.Containers[0].Ports, pod.Spec.Containers[0].ReadinessProbe = nil, nil
	}
	if s.local {
		pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				// Nodes that run containers: not virtual, not simulated.
				MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: o.localNodes}},
			}}},
		}}
	} else {
		pod.Spec.NodeName = s.where
		pod.Spec.Tolerations = []corev1.Toleration{{Key: consts.VirtualNodeTaintKey, Operator: corev1.TolerationOpExists}}
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: o.namespace}, Spec: corev1.ServiceSpec{
		Selector: labels, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(port)}},
	}}
	objs := []client.Object{pod, svc}
	if s.hostNetwork {
		objs = objs[:1]
	}
	for _, obj := range objs {
		if err := o.Local.Client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %s %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
		}
	}
	return nil
}

// run fetches url from inside from's pod, expecting to's name, up to
// o.Attempts times.
func (o *Options) run(ctx context.Context, from, to *server, via, url string) check {
	c := check{from: from.name + " (" + from.where + ")", to: to.name + " (" + to.where + ")", via: via}
	// A second between attempts, no more than o.Attempts of them.
	err := kwait.ExponentialBackoffWithContext(ctx, kwait.Backoff{Duration: time.Second, Steps: o.Attempts}, func(ctx context.Context) (bool, error) {
		var body string
		body, c.err = o.exec(ctx, from.name, "timeout", "5", "wget", "-q", "-O", "-", url)
		if c.err == nil && strings.TrimSpace(body) != to.name {
			c.err = fmt.Errorf("%s answered %q, not %s", url, strings.TrimSpace(body), to.name)
		}
		return c.err == nil, nil
	})
	if c.err == nil && err != nil && ctx.Err() != nil {
		// ctx ended before any attempt: not a success.
		c.err = err
	}
	return c
}

// exec runs a command in a test pod, through the API server (and, for a
// remote pod, its virtual node).
func (o *Options) exec(ctx context.Context, pod string, cmd ...string) (string, error) {
	req := o.Local.Clientset.CoreV1().RESTClient().Post().Resource("pods").Namespace(o.namespace).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: "web", Command: cmd, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	ex, err := remotecommand.NewSPDYExecutor(o.Local.Config, http.MethodPost, req.URL())
	if err != nil {
		return "", err
	}
	var stdout, stderr bytes.Buffer
	ectx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := ex.StreamWithContext(ectx, remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr}); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			return "", err
		}
		return "", errors.New(msg)
	}
	return stdout.String(), nil
}

// cleanup removes the test namespace, the offloading first so that the
// remote twins go, and waits (a while) until it is gone, so that the next
// run starts afresh.
func (o *Options) cleanup() {
	if o.namespace == "" {
		return // not created
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = o.Local.Client.Delete(ctx, &offv1beta1.NamespaceOffloading{ObjectMeta: metav1.ObjectMeta{Name: offv1beta1.NamespaceOffloadingName, Namespace: o.namespace}})
	if err := o.Local.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.namespace}}); client.IgnoreNotFound(err) != nil {
		o.out.Warn("removing namespace %s: %v", o.namespace, err)
		return
	}
	if err := wait.Gone(ctx, o.Local.Client, types.NamespacedName{Name: o.namespace}, &corev1.Namespace{}, "namespace "+o.namespace); err != nil {
		o.out.Warn("%v", err)
		return
	}
	o.out.Info("Namespace %s removed", o.namespace)
}
