package playground

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/kubectl/pkg/util/podutils"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/offload"
	"github.com/liqo-go/liqo/pkg/testbed"
)

// The demo: a namespace extended to the provider and a Deployment spread
// over every node, the virtual one included.
const (
	demoNamespace  = "liqo-demo"
	demoDeployment = "demo"
)

// offloadDemo offloads liqo-demo from consumer (LocalAndRemote, every
// peer), runs a Deployment with one replica per node there, waits until
// every replica is Ready and shows where they run.
func offloadDemo(ctx context.Context, out io.Writer, l layout, consumer string, networking bool) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", l.kubeconfig(consumer))
	if err != nil {
		return err
	}
	cl, err := client.New(cfg, client.Options{Scheme: apis.NewScheme()})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nOffloading namespace %s and running Deployment %s in it:\n", demoNamespace, demoDeployment)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: demoNamespace}}
	if err := cl.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	// Offloaded exactly as a user would, with liqoctl offload's defaults
	// (DefaultName, LocalAndRemote, every peer).
	cmd := offload.NewCommand()
	cmd.SetOut(out)
	cmd.SetErr(out)
	cmd.SetArgs([]string{"namespace", demoNamespace, "--kubeconfig", l.kubeconfig(consumer)})
	if err := cmd.ExecuteContext(ctx); err != nil {
		return err
	}
	var off offv1beta1.NamespaceOffloading
	if err := cl.Get(ctx, types.NamespacedName{Namespace: demoNamespace, Name: offv1beta1.NamespaceOffloadingName}, &off); err != nil {
		return err
	}
	fmt.Fprintf(out, "namespace %s offloaded, twin namespace %s\n", demoNamespace, off.Status.RemoteNamespaceName)

	var nodes corev1.NodeList
	if err := cl.List(ctx, &nodes); err != nil {
		return err
	}
	replicas := int32(len(nodes.Items))
	if err := cl.Create(ctx, demoDeploymentObject(replicas)); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		if err := cl.List(ctx, &pods, client.InNamespace(demoNamespace), client.MatchingLabels{"app": demoDeployment}); err != nil {
			return false, err
		}
		// Ready, not only Running: the table below is what the user reads,
		// and a replica whose probe has not passed yet shows 0/1 there.
		running, remote := 0, 0
		for _, p := range pods.Items {
			if podutils.IsPodReady(&p) {
				running++
				if isVirtual(nodes.Items, p.Spec.NodeName) {
					remote++
				}
			}
		}
		return running >= int(replicas) && remote > 0, nil
	}); err != nil {
		return fmt.Errorf("the demo Deployment is not Ready with a replica on the virtual node: %w", err)
	}
	fmt.Fprintf(out, "\n$ kubectl --kubeconfig %s get pods -n %s -o wide\n", l.kubeconfig(consumer), demoNamespace)
	kubectl := exec.CommandContext(ctx, filepath.Join(l.bin(), "kubectl"), "--kubeconfig", l.kubeconfig(consumer),
		"get", "pods", "-n", demoNamespace, "-o", "wide")
	kubectl.Stdout, kubectl.Stderr = out, out
	if err := kubectl.Run(); err != nil {
		return err
	}
	if !networking {
		return nil
	}
	return fetchAcross(ctx, out, l, cl, consumer, nodes.Items)
}

// fetchAcross shows the network fabric at work: the demo replica on a real
// node of the consumer fetches the page of the replica on the virtual node,
// which runs in the provider, at the address the consumer shows for it.
func fetchAcross(ctx context.Context, out io.Writer, l layout, cl client.Client, consumer string, nodes []corev1.Node) error {
	var pods corev1.PodList
	if err := cl.List(ctx, &pods, client.InNamespace(demoNamespace), client.MatchingLabels{"app": demoDeployment}); err != nil {
		return err
	}
	var from, to *corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		switch n := nodeOf(nodes, p.Spec.NodeName); {
		case n == nil || p.Status.Phase != corev1.PodRunning:
		case n.Labels[consts.TypeLabel] == consts.TypeVirtualNode:
			to = p
		case n.Labels[testbed.NodeTypeLabel] == testbed.RealNodeType:
			from = p
		}
	}
	if from == nil || to == nil {
		return fmt.Errorf("no demo replica on both a real node and the virtual node to show the network fabric")
	}
	url := fmt.Sprintf("http://%s:8080/", to.Status.PodIP)
	fmt.Fprintf(out, "\n$ kubectl --kubeconfig %s exec -n %s %s -- wget -q -O - %s\n", l.kubeconfig(consumer), demoNamespace, from.Name, url)
	var last []byte
	err := wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		cmd := exec.CommandContext(ctx, filepath.Join(l.bin(), "kubectl"), "--kubeconfig", l.kubeconfig(consumer),
			"exec", "-n", demoNamespace, from.Name, "--", "timeout", "5", "wget", "-q", "-O", "-", url)
		var err error
		last, err = cmd.CombinedOutput()
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("the replica on %s could not fetch %s (the replica on the virtual node): %s", from.Spec.NodeName, url, last)
	}
	fmt.Fprintf(out, "%s(answered by %s, running in the provider, through the network fabric)\n", last, to.Name)
	return nil
}

func nodeOf(nodes []corev1.Node, name string) *corev1.Node {
	for i := range nodes {
		if nodes[i].Name == name {
			return &nodes[i]
		}
	}
	return nil
}

func isVirtual(nodes []corev1.Node, name string) bool {
	n := nodeOf(nodes, name)
	return n != nil && n.Labels[consts.TypeLabel] == consts.TypeVirtualNode
}

// demoDeploymentObject spreads its replicas one per node: with as many
// replicas as nodes, one of them lands on the virtual node.
func demoDeploymentObject(replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": demoDeployment}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: demoDeployment, Namespace: demoNamespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
						MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule,
						LabelSelector: &metav1.LabelSelector{MatchLabels: labels},
					}},
					// busybox is served by the testbed's registry, so the
					// replica on a real node runs for real.
					Containers: []corev1.Container{{
						Name: "web", Image: "busybox",
						Command: []string{"sh", "-c", "mkdir -p /www && hostname > /www/index.html && exec httpd -f -p 8080 -h /www"},
						Ports:   []corev1.ContainerPort{{ContainerPort: 8080}},
						// Ready once it serves. Run in the container, the probe
						// also uses some CPU there every period, so that kubectl
						// top has a figure for the remote replica: metrics-server
						// lists no container whose CPU counter is still zero,
						// and an idle httpd's counter on the virtual node,
						// integrated from the provider's rates, would be.
						ReadinessProbe: &corev1.Probe{
							ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"wget", "-q", "-O", "/dev/null", "http://127.0.0.1:8080/"}}},
							PeriodSeconds: 10,
						},
					}},
				},
			},
		},
	}
}
