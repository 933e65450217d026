package networking

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/images"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
	"github.com/liqo-go/liqo/test/realpods"
)

// TestPrivateImageNotReused: two consumers of milan, whose one real node
// runs both their pods (issue 30, finding 8). Rome runs an image from
// the private part of milan's registry with a pull secret holding its
// credentials, so the image is in that node's containerd afterwards.
// Paris then names the same image with imagePullPolicy IfNotPresent and no
// pull secret: a kubelet would start it from the node's copy without
// asking the registry; milan pulls every consumer's image Always, so the
// registry is asked, refuses paris, and its pod never runs. The same pod
// with a pull secret of the right credentials runs: the refusal was the
// registry's, not a path the node cannot pull from.
func TestPrivateImageNotReused(t *testing.T) {
	ctx := realpods.Timeout(t, 10*time.Minute)
	// Rome asks for part of what milan shares, so that paris's slice gets
	// the rest: by default rome's takes it all, and paris's virtual node
	// took no pod ("Too many pods"). A later peering with defaults asks for
	// it all again.
	if out, err := liqoctlRun(ctx, "peer", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["milan"],
		"--server-service-type", "NodePort", "--cpu", "500m", "--memory", "2Gi", "--pods", "20", "--timeout", "5m"); err != nil {
		t.Fatalf("peer rome -> milan: %v\n%s", err, out)
	}
	// Paris's pods need no network to the others: the cheaper peering.
	if out, err := liqoctlRun(ctx, "peer", "--kubeconfig", kubeconfigs["paris"], "--remote-kubeconfig", kubeconfigs["milan"],
		"--networking-disabled", "--cpu", "400m", "--memory", "1Gi", "--pods", "10", "--timeout", "5m"); err != nil {
		t.Fatalf("peer paris -> milan: %v\n%s", err, out)
	}
	// Registered first, run last: after the namespaces' deletion.
	t.Cleanup(func() {
		// The other tests know milan as rome's provider only.
		if out, err := liqoctlRun(context.Background(), "unpeer", "--kubeconfig", kubeconfigs["paris"], "--remote-kubeconfig", kubeconfigs["milan"], "--delete-namespaces"); err != nil {
			t.Errorf("unpeer paris -> milan: %v\n%s", err, out)
		}
	})

	bb, err := images.Busybox("/bin/busybox")
	if err != nil {
		t.Fatal(err)
	}
	// A mark of its own, so the image differs from the public busybox.
	cfg, err := bb.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cfg = cfg.DeepCopy()
	cfg.Config.Env = append(cfg.Config.Env, "PRIVATE_IMAGE=1")
	private, err := mutate.ConfigFile(bb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	image, err := milan.PushPrivate(ctx, "busybox:1", private)
	if err != nil {
		t.Fatal(err)
	}
	user, password := milan.RegistryCredentials()

	// Rome, with the credentials: its pod runs on milan's node.
	romeNS, romeTwin := offloaded(ctx, t, rome, "private-owner")
	pullSecret(ctx, t, rome, romeNS, user, password)
	harness.Eventually(ctx, t, "rome's pull secret reflected to milan", func() (bool, error) {
		_, err := milan.Client().CoreV1().Secrets(romeTwin).Get(ctx, "regcred", metav1.GetOptions{})
		return err == nil, nil
	})
	createPod(ctx, t, rome, privatePod(romeNS, "owner", image, corev1.PullIfNotPresent, "regcred"))
	owner := runsOnMilan(ctx, t, romeTwin, "owner")
	node := owner.Spec.NodeName
	t.Logf("rome's pod pulled %s on milan's node %s", image, node)

	// Paris, without: the same image, IfNotPresent, no pull secret here
	// nor in its namespace on milan.
	parisNS, parisTwin := offloaded(ctx, t, paris, "private-reuser")
	createPod(ctx, t, paris, privatePod(parisNS, "reuser", image, corev1.PullIfNotPresent, ""))
	var reason string
	harness.Eventually(ctx, t, "paris's pod refused by the registry on milan", func() (bool, error) {
		local, err := paris.Client().CoreV1().Pods(parisNS).Get(ctx, "reuser", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if local.Status.Phase == corev1.PodRunning {
			t.Fatalf("paris's pod runs the private image without credentials (on %s)", local.Spec.NodeName)
		}
		remote, err := milan.Client().CoreV1().Pods(parisTwin).Get(ctx, "reuser", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if remote.Status.Phase == corev1.PodRunning {
			t.Fatalf("milan runs paris's pod with the private image without credentials, on %s", remote.Spec.NodeName)
		}
		if remote.Spec.NodeName == "" {
			return false, nil
		}
		if remote.Spec.NodeName != node {
			t.Fatalf("paris's pod was placed on %s, not on %s where the image is: the test proves nothing", remote.Spec.NodeName, node)
		}
		for _, c := range remote.Spec.Containers {
			if c.ImagePullPolicy != corev1.PullAlways {
				t.Fatalf("milan's pod for paris pulls %s, want Always", c.ImagePullPolicy)
			}
		}
		for _, s := range remote.Status.ContainerStatuses {
			if w := s.State.Waiting; w != nil && (w.Reason == "ErrImagePull" || w.Reason == "ImagePullBackOff") &&
				strings.Contains(w.Message, "401 Unauthorized") {
				reason = w.Reason + ": " + w.Message
				return true, nil
			}
		}
		return false, nil
	})
	t.Logf("paris's pod on %s: %s", node, reason)
	secrets, err := milan.Client().CoreV1().Secrets(parisTwin).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets.Items {
		if s.Type == corev1.SecretTypeDockerConfigJson {
			t.Errorf("paris's namespace on milan holds a pull secret, %s: the refusal proves nothing", s.Name)
		}
	}
	// The status paris sees: never Running, and why.
	local, err := paris.Client().CoreV1().Pods(parisNS).Get(ctx, "reuser", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if local.Status.Phase == corev1.PodRunning {
		t.Errorf("paris's pod is Running")
	}

	// With the credentials, paris's pod runs: the node could pull, the
	// registry said no.
	pullSecret(ctx, t, paris, parisNS, user, password)
	harness.Eventually(ctx, t, "paris's pull secret reflected to milan", func() (bool, error) {
		_, err := milan.Client().CoreV1().Secrets(parisTwin).Get(ctx, "regcred", metav1.GetOptions{})
		return err == nil, nil
	})
	createPod(ctx, t, paris, privatePod(parisNS, "holder", image, corev1.PullIfNotPresent, "regcred"))
	runsOnMilan(ctx, t, parisTwin, "holder")
}

// runsOnMilan waits a few minutes for the pod name in milan's namespace ns
// to run, failing with the last state of its container (a pull error
// tells more than a timeout).
func runsOnMilan(ctx context.Context, t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	var pod *corev1.Pod
	harness.Eventually(ctx, t, "pod "+name+" running on milan", func() (bool, error) {
		p, err := milan.Client().CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pod = p
		if p.Status.Phase == corev1.PodRunning {
			return true, nil
		}
		return false, fmt.Errorf("phase %s, conditions %+v, containers %+v", p.Status.Phase, p.Status.Conditions, p.Status.ContainerStatuses)
	})
	return pod
}

// offloaded makes a namespace in consumer, offloads it and returns it with
// its twin on milan.
func offloaded(ctx context.Context, t *testing.T, consumer *testbed.Cluster, prefix string) (ns, twin string) {
	t.Helper()
	ns = realpods.Namespace(ctx, t, consumer, prefix)
	if out, err := liqoctlRun(ctx, "offload", "namespace", ns, "--kubeconfig", kubeconfigs[consumer.Name], "--timeout", "2m"); err != nil {
		t.Fatalf("offload %s on %s: %v\n%s", ns, consumer.Name, err, out)
	}
	cl, err := client.New(consumer.Config, client.Options{Scheme: apis.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, consumer.Name+"/"+ns+"'s twin on milan", func() (bool, error) {
		var nsof offv1beta1.NamespaceOffloading
		if err := cl.Get(ctx, types.NamespacedName{Namespace: ns, Name: "offloading"}, &nsof); err != nil {
			return false, err
		}
		twin = nsof.Status.RemoteNamespaceName
		if twin == "" {
			return false, nil
		}
		_, err := milan.Client().CoreV1().Namespaces().Get(ctx, twin, metav1.GetOptions{})
		return err == nil, err
	})
	return ns, twin
}

// pullSecret creates the docker-registry Secret regcred holding user's
// credentials for milan's registry, as kubectl create secret
// docker-registry does.
func pullSecret(ctx context.Context, t *testing.T, c *testbed.Cluster, ns, user, password string) {
	t.Helper()
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	cfg, err := json.Marshal(map[string]any{"auths": map[string]any{milan.NodeRegistryAddr(): map[string]string{
		"username": user, "password": password, "auth": auth}}})
	if err != nil {
		t.Fatal(err)
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "regcred", Namespace: ns},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: cfg},
	}
	if _, err := c.Client().CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// privatePod runs image on milan's virtual node with policy, with the pull
// secret named secret (none if empty). It checks the image's own mark.
func privatePod(ns, name, image string, policy corev1.PullPolicy, secret string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			NodeSelector:                  map[string]string{consts.TypeLabel: consts.TypeVirtualNode, consts.RemoteClusterIDLabel: "milan"},
			Tolerations:                   []corev1.Toleration{{Key: consts.VirtualNodeTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{Name: name, Image: image, ImagePullPolicy: policy,
				Command: []string{"sh", "-c", `test "$PRIVATE_IMAGE" = 1 && exec sleep 3600`}}},
		},
	}
	if secret != "" {
		p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: secret}}
	}
	return p
}

func createPod(ctx context.Context, t *testing.T, c *testbed.Cluster, p *corev1.Pod) {
	t.Helper()
	if _, err := c.Client().CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
