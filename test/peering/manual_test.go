package peering

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
)

// runSplit runs liqoctl in-process with its standard output apart from its
// standard error: the manifest commands print the manifest on the first,
// their progress on the second.
func runSplit(ctx context.Context, args ...string) (stdout, stderr string, err error) {
	cmd := liqoctl.NewRootCommand()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err = cmd.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// TestManualPeering: naples peers with rome stage by stage, as two
// administrators who each have access to their own cluster only. rome
// issues a nonce, naples signs it into a Tenant, rome applies it (kubectl)
// and hands back an Identity, naples applies it; a tampered signature and
// a nonce rome never issued are refused with the provider's reason. naples
// asks for a ResourceSlice without a virtual node, makes one of it with
// create virtualnode, and a pod runs there on rome; delete virtualnode and
// delete resourceslice remove them. Then liqoctl peer stops after each
// stage (--create-resource-slice=false, --create-virtual-node=false) with
// nothing past it, and ends in the objects the manual path made. Last,
// force unpeer removes naples's side alone (a slice of create resourceslice
// with it) and unpeer cleans rome's.
func TestManualPeering(t *testing.T) {
	const consumer, provider = "naples", "rome"
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	unpeer := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if out, err := run(ctx, "unpeer", "--kubeconfig", kubeconfigs[consumer], "--remote-kubeconfig", kubeconfigs[provider]); err != nil {
			t.Logf("unpeer %s -> %s: %v\n%s", consumer, provider, err, out)
		}
	}
	unpeer()
	t.Cleanup(unpeer)
	waitNodesReady(ctx, t, provider)
	onProvider := []string{"--kubeconfig", kubeconfigs[provider]}
	onConsumer := []string{"--kubeconfig", kubeconfigs[consumer]}
	naples, rome := clusterClient(t, consumer), clusterClient(t, provider)
	consumerNS, providerNS := consts.TenantNamespace(provider), consts.TenantNamespace(consumer)

	liqo := func(args ...string) string {
		t.Helper()
		start := time.Now()
		out, errOut, err := runSplit(ctx, args...)
		if err != nil {
			t.Fatalf("liqoctl %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
		}
		t.Logf("liqoctl %s (%s):\n%s", strings.Join(args[:min(3, len(args))], " "), time.Since(start).Round(time.Millisecond), strings.TrimSpace(errOut+out))
		return out
	}
	refused := func(want string, args ...string) {
		t.Helper()
		out, errOut, err := runSplit(ctx, args...)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("liqoctl %s: want an error containing %q, got %v\n%s%s", strings.Join(args, " "), want, err, out, errOut)
		}
		t.Logf("liqoctl %s: %v", strings.Join(args[:min(3, len(args))], " "), err)
	}

	t.Run("bad input before the peering", func(t *testing.T) {
		refused(`no nonce for cluster naples`, append([]string{"get", "nonce", "--remote-cluster-id", consumer}, onProvider...)...)
		refused(`no Tenant of cluster nobody`, append([]string{"generate", "identity", "--remote-cluster-id", "nobody"}, onProvider...)...)
		refused(`not authenticated with rome`, append([]string{"create", "resourceslice", "pool", "--remote-cluster-id", provider}, onConsumer...)...)
		refused(`not authenticated with rome`, append([]string{"create", "virtualnode", "mynode", "--remote-cluster-id", provider}, onConsumer...)...)
		refused(`--nonce is not base64`, append([]string{"generate", "tenant", "--remote-cluster-id", provider, "--nonce", "not a nonce!"}, onConsumer...)...)
		refused(`--nonce has 3 bytes`, append([]string{"generate", "tenant", "--remote-cluster-id", provider, "--nonce", "YWJj"}, onConsumer...)...)
		refused(`is this cluster's own ID`, append([]string{"create", "nonce", "--remote-cluster-id", provider}, onProvider...)...)
		refused(`--remote-cluster-id: cluster ID "Not_An_ID"`, append([]string{"create", "nonce", "--remote-cluster-id", "Not_An_ID"}, onProvider...)...)
	})

	// The provider issues the nonce.
	out := liqo(append([]string{"create", "nonce", "--remote-cluster-id", consumer}, onProvider...)...)
	nonce := strings.TrimSpace(liqo(append([]string{"get", "nonce", "--remote-cluster-id", consumer}, onProvider...)...))
	if !strings.Contains(out, "INFO: Nonce retrieved: "+nonce) {
		t.Fatalf("create nonce does not print the nonce get nonce prints (%q):\n%s", nonce, out)
	}

	// generateTenant has the consumer sign nonce and returns the Tenant
	// manifest it prints.
	generateTenant := func(nonce string) *authv1beta1.Tenant {
		t.Helper()
		manifest := liqo(append([]string{"generate", "tenant", "--remote-cluster-id", provider, "--nonce", nonce}, onConsumer...)...)
		var tenant authv1beta1.Tenant
		if err := yaml.UnmarshalStrict([]byte(manifest), &tenant); err != nil {
			t.Fatalf("generate tenant printed no Tenant: %v\n%s", err, manifest)
		}
		return &tenant
	}
	apply := func(cluster string, obj any) {
		t.Helper()
		data, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		kubectl(t, cluster, string(data), "apply", "-f", "-")
	}
	tenant := generateTenant(nonce)
	if tenant.Kind != "Tenant" || tenant.Namespace != providerNS || tenant.Name != consumer || string(tenant.Spec.ClusterID) != consumer ||
		len(tenant.Spec.Signature) == 0 || len(tenant.Spec.CSR) == 0 || len(tenant.Spec.PublicKey) == 0 {
		t.Fatalf("the generated Tenant is not naples's, signed: %+v", tenant)
	}

	t.Run("a tampered signature is refused", func(t *testing.T) {
		bad := tenant.DeepCopy()
		bad.Spec.Signature[0] ^= 0xff
		apply(provider, bad)
		refused("the provider rejected the Tenant: spec.signature does not verify", append([]string{"generate", "identity", "--remote-cluster-id", consumer}, onProvider...)...)
	})
	t.Run("a nonce the provider did not issue is refused", func(t *testing.T) {
		forged := make([]byte, consts.NonceSize)
		if _, err := rand.Read(forged); err != nil {
			t.Fatal(err)
		}
		apply(provider, generateTenant(base64.StdEncoding.EncodeToString(forged)))
		refused("the provider rejected the Tenant", append([]string{"generate", "identity", "--remote-cluster-id", consumer}, onProvider...)...)
	})

	// The genuine Tenant, then the Identity it yields.
	tenant = generateTenant(nonce)
	apply(provider, tenant)
	manifest := liqo(append([]string{"generate", "identity", "--remote-cluster-id", consumer}, onProvider...)...)
	var id authv1beta1.Identity
	if err := yaml.UnmarshalStrict([]byte(manifest), &id); err != nil {
		t.Fatalf("generate identity printed no Identity: %v\n%s", err, manifest)
	}
	if id.Namespace != consumerNS || string(id.Spec.ClusterID) != provider || ptr.Deref(id.Spec.Namespace, "") != providerNS || len(id.Spec.AuthParams.SignedCRT) == 0 {
		t.Fatalf("the generated Identity is not naples's for rome: %+v", id)
	}
	kubectl(t, consumer, manifest, "apply", "-f", "-")
	harness.Eventually(ctx, t, "the applied Identity Ready", func() (bool, error) {
		var got authv1beta1.Identity
		if err := naples.Get(ctx, client.ObjectKeyFromObject(&id), &got); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return meta.IsStatusConditionTrue(got.Status.Conditions, authv1beta1.ReadyCondition), nil
	})
	manual := peeringObjects(ctx, t, naples, rome, consumer, provider)

	t.Run("get kubeconfig gives the consumer's rights on the provider", func(t *testing.T) {
		kc := liqo(append([]string{"get", "kubeconfig", "--remote-cluster-id", provider}, onConsumer...)...)
		cfg, err := clientcmd.RESTConfigFromKubeConfig([]byte(kc))
		if err != nil {
			t.Fatalf("get kubeconfig printed no kubeconfig: %v\n%s", err, kc)
		}
		cs := kubernetes.NewForConfigOrDie(cfg)
		rev, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil || rev.Status.UserInfo.Username != consts.ConsumerUser(consumer) {
			t.Fatalf("the kubeconfig is not naples's user on rome: %v %+v", err, rev)
		}
	})

	// A slice without a virtual node, then a virtual node of it.
	liqo(append([]string{"create", "resourceslice", "pool", "--remote-cluster-id", provider, "--cpu", "2", "--memory", "4Gi", "--pods", "20",
		"--no-virtual-node"}, onConsumer...)...)
	var vns offv1beta1.VirtualNodeList
	if err := naples.List(ctx, &vns, client.InNamespace(consumerNS)); err != nil || len(vns.Items) != 0 {
		t.Fatalf("--no-virtual-node: VirtualNodes %v (%v)", vns.Items, err)
	}
	liqo(append([]string{"create", "virtualnode", "mynode", "--remote-cluster-id", provider, "--resource-slice-name", "pool"}, onConsumer...)...)
	n := waitNode(t, consumer, "mynode", "Ready", testbed.NodeReady)
	if cpu := n.Status.Capacity[corev1.ResourceCPU]; cpu.String() != "2" || n.Labels[consts.RemoteClusterIDLabel] != provider {
		t.Errorf("node mynode offers %s CPUs, labels %v; want the slice's 2, of rome", cpu.String(), n.Labels)
	}
	manualSlice, manualVN := &authv1beta1.ResourceSlice{}, &offv1beta1.VirtualNode{}
	if err := naples.Get(ctx, types.NamespacedName{Namespace: consumerNS, Name: "pool"}, manualSlice); err != nil {
		t.Fatal(err)
	}
	if err := naples.Get(ctx, types.NamespacedName{Namespace: consumerNS, Name: "mynode"}, manualVN); err != nil {
		t.Fatal(err)
	}

	t.Run("every -o prints JSON, and --get a field of it", func(t *testing.T) {
		// A gateway whose key generate publickey prints; deleted after.
		liqo(append([]string{"create", "gatewayserver", "--remote-cluster-id", provider, "--service-type", "NodePort", "--timeout", "60s"}, onConsumer...)...)
		defer liqo(append([]string{"delete", "gatewayserver", provider}, onConsumer...)...)
		fabric := []string{"--remote-cluster-id", provider}
		outputJSON(t, map[string][]string{
			"liqoctl create nonce":           append([]string{"create", "nonce", "--remote-cluster-id", consumer}, onProvider...),
			"liqoctl generate nonce":         append([]string{"generate", "nonce", "--remote-cluster-id", consumer}, onProvider...),
			"liqoctl create configuration":   slices.Concat([]string{"create", "configuration", "--pod-cidr", "10.99.0.0/16", "--external-cidr", "10.98.0.0/16"}, fabric, onConsumer),
			"liqoctl create gatewayserver":   slices.Concat([]string{"create", "gatewayserver"}, fabric, onConsumer),
			"liqoctl create gatewayclient":   slices.Concat([]string{"create", "gatewayclient", "--addresses", "192.0.2.1", "--port", "51840"}, fabric, onConsumer),
			"liqoctl create publickey":       slices.Concat([]string{"create", "publickey", "--public-key", "7+5hRCDFfd0qjpHu729rg9U1bCKIFVvg8nO++YbjuFA="}, fabric, onConsumer),
			"liqoctl generate configuration": append([]string{"generate", "configuration"}, onConsumer...),
			"liqoctl generate publickey":     slices.Concat([]string{"generate", "publickey", "--gateway-type", "server"}, fabric, onConsumer),
			"liqoctl info":                   append([]string{"info"}, onConsumer...),
			"liqoctl info peer":              append([]string{"info", "peer", provider}, onConsumer...),
			"liqoctl version":                append([]string{"version"}, onConsumer...),
			"liqoctl offload namespace":      append([]string{"offload", "namespace", "default"}, onConsumer...),
			"liqoctl export service":         append([]string{"export", "service", "kubernetes", "-n", "default"}, onConsumer...),
			"liqoctl create resourceslice":   append([]string{"create", "resourceslice", "other", "--remote-cluster-id", provider}, onConsumer...),
			"liqoctl create virtualnode":     append([]string{"create", "virtualnode", "other", "--remote-cluster-id", provider, "--resource-slice-name", "pool"}, onConsumer...),
			"liqoctl generate tenant":        append([]string{"generate", "tenant", "--remote-cluster-id", provider, "--nonce", nonce}, onConsumer...),
			"liqoctl generate identity":      append([]string{"generate", "identity", "--remote-cluster-id", consumer}, onProvider...),
		}, liqo)
		if got := strings.TrimSpace(liqo(append([]string{"info", "--get", "local.clusterID"}, onConsumer...)...)); got != consumer {
			t.Errorf("info --get local.clusterID = %q, want %s", got, consumer)
		}
		if got := strings.TrimSpace(liqo(append([]string{"info", "peer", provider, "--get", provider + ".role"}, onConsumer...)...)); got != "Provider" {
			t.Errorf("info peer %s --get %s.role = %q, want Provider", provider, provider, got)
		}
		// -o of every other format goes through the same printers.
		if got := liqo(append([]string{"info", "peer", provider, "-o", "jsonpath={." + provider + ".virtualNodes[*].name}"}, onConsumer...)...); got != "mynode" {
			t.Errorf("info peer -o jsonpath: %q, want mynode", got)
		}
	})

	t.Run("a pod runs on the virtual node, on the provider", func(t *testing.T) {
		const ns = "manual-peering"
		if err := naples.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		if out, err := run(ctx, "offload", "namespace", ns, "--kubeconfig", kubeconfigs[consumer], "--pod-offloading-strategy", "Remote",
			"--selector", consts.RemoteClusterIDLabel+"="+provider, "--timeout", "1m"); err != nil {
			t.Fatalf("offload: %v\n%s", err, out)
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: ns}, Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers:                    []corev1.Container{{Name: "app", Image: "busybox", Command: []string{"sleep", "3600"}}}}}
		if err := naples.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		local, _, where := waitOffloaded(ctx, t, naples, ns, "hello")
		if where != provider || local.Spec.NodeName != "mynode" {
			t.Errorf("pod runs on %s of %s, want mynode of rome", local.Spec.NodeName, where)
		}
		if err := naples.Delete(ctx, pod); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
		if out, err := run(ctx, "unoffload", "namespace", ns, "--kubeconfig", kubeconfigs[consumer]); err != nil {
			t.Fatalf("unoffload: %v\n%s", err, out)
		}
	})

	refused("in use (ResourceSlice pool, VirtualNode mynode", append([]string{"unauthenticate", "--remote-kubeconfig", kubeconfigs[provider]}, onConsumer...)...)
	refused("no VirtualNode nothere of provider rome", append([]string{"delete", "virtualnode", "nothere", "--remote-cluster-id", provider}, onConsumer...)...)
	// A second node of the same slice, which goes with the slice, offering
	// one of the two storage classes rome has for the time of the check.
	t.Run("a virtual node offers the storage classes --storage-classes names", func(t *testing.T) {
		classes := []string{"manual-hdd", "manual-ssd"}
		for _, name := range classes {
			class := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: "example.com/none"}
			if err := rome.Create(ctx, class); err != nil {
				t.Fatal(err)
			}
			// Gone before peer makes its virtual node below, which lists
			// rome's classes and is compared with the manual one.
			defer func() {
				if err := rome.Delete(context.Background(), class); client.IgnoreNotFound(err) != nil {
					t.Error(err)
				}
			}()
		}
		harness.Eventually(ctx, t, "rome's two classes reported on slice pool", func() (bool, error) {
			var s authv1beta1.ResourceSlice
			if err := naples.Get(ctx, types.NamespacedName{Namespace: consumerNS, Name: "pool"}, &s); err != nil {
				return false, err
			}
			n := 0
			for _, c := range s.Status.StorageClasses {
				if slices.Contains(classes, c.StorageClassName) {
					n++
				}
			}
			return n == len(classes), nil
		})
		refused("--storage-classes: the provider reported no storage class nosuch for the slice (it reported: ",
			append([]string{"create", "virtualnode", "mynode2", "--remote-cluster-id", provider, "--resource-slice-name", "pool", "--storage-classes", "nosuch"}, onConsumer...)...)
		liqo(append([]string{"create", "virtualnode", "mynode2", "--remote-cluster-id", provider, "--resource-slice-name", "pool", "--storage-classes", "manual-ssd"}, onConsumer...)...)
		var vn offv1beta1.VirtualNode
		if err := naples.Get(ctx, types.NamespacedName{Namespace: consumerNS, Name: "mynode2"}, &vn); err != nil {
			t.Fatal(err)
		}
		if len(vn.Spec.StorageClasses) != 1 || vn.Spec.StorageClasses[0].StorageClassName != "manual-ssd" {
			t.Errorf("VirtualNode mynode2 offers %v, want manual-ssd alone", vn.Spec.StorageClasses)
		}
	})
	liqo(append([]string{"delete", "virtualnode", "mynode", "--remote-cluster-id", provider}, onConsumer...)...)
	if err := naples.Get(ctx, types.NamespacedName{Name: "mynode"}, &corev1.Node{}); !apierrors.IsNotFound(err) {
		t.Errorf("node mynode still there after delete virtualnode: %v", err)
	}
	if out := liqo(append([]string{"delete", "resourceslice", "pool", "--remote-cluster-id", provider}, onConsumer...)...); !strings.Contains(out, "with 1 virtual nodes") {
		t.Errorf("delete resourceslice does not say it removed mynode2:\n%s", out)
	}
	if err := naples.Get(ctx, types.NamespacedName{Name: "mynode2"}, &corev1.Node{}); !apierrors.IsNotFound(err) {
		t.Errorf("node mynode2 still there after delete resourceslice: %v", err)
	}
	harness.Eventually(ctx, t, "the replica of slice pool gone from rome", func() (bool, error) {
		err := rome.Get(ctx, types.NamespacedName{Namespace: providerNS, Name: "pool"}, &authv1beta1.ResourceSlice{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})

	unauthenticated := func() {
		t.Helper()
		liqo(append([]string{"unauthenticate", "--remote-kubeconfig", kubeconfigs[provider]}, onConsumer...)...)
		if err := rome.Get(ctx, types.NamespacedName{Namespace: providerNS, Name: consumer}, &authv1beta1.Tenant{}); !apierrors.IsNotFound(err) {
			t.Errorf("naples's Tenant on rome after unauthenticate: %v", err)
		}
		if err := naples.Get(ctx, client.ObjectKeyFromObject(&id), &authv1beta1.Identity{}); !apierrors.IsNotFound(err) {
			t.Errorf("naples's Identity for rome after unauthenticate: %v", err)
		}
	}
	unauthenticated()
	// authenticate does the same with access to both clusters.
	liqo(append([]string{"authenticate", "--remote-kubeconfig", kubeconfigs[provider]}, onConsumer...)...)
	compareObjects(t, manual, peeringObjects(ctx, t, naples, rome, consumer, provider))
	unauthenticated()

	t.Run("peer stops after each stage", func(t *testing.T) {
		peer(t, consumer, provider, "--create-resource-slice=false")
		var slices authv1beta1.ResourceSliceList
		if err := naples.List(ctx, &slices, client.InNamespace(consumerNS)); err != nil || len(slices.Items) != 0 {
			t.Errorf("--create-resource-slice=false: ResourceSlices on naples %v (%v)", slices.Items, err)
		}
		if err := rome.List(ctx, &slices, client.InNamespace(providerNS)); err != nil || len(slices.Items) != 0 {
			t.Errorf("--create-resource-slice=false: ResourceSlices on rome %v (%v)", slices.Items, err)
		}
		compareObjects(t, manual, peeringObjects(ctx, t, naples, rome, consumer, provider))

		peer(t, consumer, provider, "--create-virtual-node=false", "--cpu=2", "--memory=4Gi", "--pods=20")
		var s authv1beta1.ResourceSlice
		if err := naples.Get(ctx, types.NamespacedName{Namespace: consumerNS, Name: provider}, &s); err != nil || len(s.Status.Resources) == 0 {
			t.Errorf("--create-virtual-node=false: slice %+v not granted (%v)", s.Status, err)
		}
		// The creator reacts within milliseconds: give it a second to do
		// what it must not.
		time.Sleep(time.Second)
		if err := naples.List(ctx, &vns, client.InNamespace(consumerNS)); err != nil || len(vns.Items) != 0 {
			t.Errorf("--create-virtual-node=false: VirtualNodes %v (%v)", vns.Items, err)
		}
		if err := naples.Get(ctx, types.NamespacedName{Name: provider}, &corev1.Node{}); !apierrors.IsNotFound(err) {
			t.Errorf("--create-virtual-node=false: node %s exists (%v)", provider, err)
		}

		out := peer(t, consumer, provider, "--cpu=2", "--memory=4Gi", "--pods=20")
		if !strings.Contains(out, "INFO: Virtual node rome is Ready") {
			t.Errorf("peer after the stops did not end with the node:\n%s", out)
		}
		checkVirtualNode(t, consumer, provider, "2", "4Gi", "20")
		refused("is the one ResourceSlice rome makes for itself", append([]string{"delete", "virtualnode", provider, "--remote-cluster-id", provider}, onConsumer...)...)
		// The same slice and virtual node as the manual path's, the
		// annotation that kept that slice from making its own node aside.
		peeredSlice, peeredVN := &authv1beta1.ResourceSlice{}, &offv1beta1.VirtualNode{}
		if err := naples.Get(ctx, types.NamespacedName{Namespace: consumerNS, Name: provider}, peeredSlice); err != nil {
			t.Fatal(err)
		}
		if err := naples.Get(ctx, types.NamespacedName{Namespace: consumerNS, Name: provider}, peeredVN); err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(manualSlice.Spec, peeredSlice.Spec) || !equality.Semantic.DeepEqual(manualSlice.Labels, peeredSlice.Labels) ||
			!equality.Semantic.DeepEqual(manualSlice.Status.Resources, peeredSlice.Status.Resources) {
			t.Errorf("ResourceSlice: manual %+v %v, peer %+v %v", manualSlice.Spec, manualSlice.Labels, peeredSlice.Spec, peeredSlice.Labels)
		}
		if !equality.Semantic.DeepEqual(manualVN.Spec, peeredVN.Spec) || !equality.Semantic.DeepEqual(manualVN.Labels, peeredVN.Labels) {
			t.Errorf("VirtualNode: manual %+v %v, peer %+v %v", manualVN.Spec, manualVN.Labels, peeredVN.Spec, peeredVN.Labels)
		}
	})

	t.Run("force unpeer cleans the consumer alone, slices of create resourceslice too", func(t *testing.T) {
		liqo(append([]string{"create", "resourceslice", "extra", "--remote-cluster-id", provider, "--cpu", "1", "--memory", "1Gi", "--pods", "5"}, onConsumer...)...)
		waitNode(t, consumer, "extra", "Ready", testbed.NodeReady)
		refused("no peering with nobody here", append([]string{"force", "unpeer", "nobody"}, onConsumer...)...)
		out := liqo(append([]string{"force", "unpeer", provider, "--delete-namespaces"}, onConsumer...)...)
		if !strings.Contains(out, "not contacted") {
			t.Errorf("force unpeer does not say it left the provider alone:\n%s", out)
		}
		for _, node := range []string{provider, "extra"} {
			if err := naples.Get(ctx, types.NamespacedName{Name: node}, &corev1.Node{}); !apierrors.IsNotFound(err) {
				t.Errorf("node %s after force unpeer: %v", node, err)
			}
		}
		if err := naples.Get(ctx, types.NamespacedName{Name: consumerNS}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
			t.Errorf("naples's tenant namespace for rome after force unpeer: %v", err)
		}
		if err := rome.Get(ctx, types.NamespacedName{Namespace: providerNS, Name: consumer}, &authv1beta1.Tenant{}); err != nil {
			t.Errorf("force unpeer touched rome: naples's Tenant there: %v", err)
		}
		// With rome reachable, unpeer cleans what force unpeer left there.
		liqo(append([]string{"unpeer", "--remote-kubeconfig", kubeconfigs[provider], "--wait=false", "--delete-namespaces"}, onConsumer...)...)
		harness.Eventually(ctx, t, "naples's tenant namespace on rome gone", func() (bool, error) {
			err := rome.Get(ctx, types.NamespacedName{Name: providerNS}, &corev1.Namespace{})
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
	})
}

// peering is what a peering consists of, on both sides, as the
// comparison between the manual path and liqoctl peer sees it.
type peeringState struct {
	tenant   *authv1beta1.Tenant
	identity *authv1beta1.Identity
}

func peeringObjects(ctx context.Context, t *testing.T, consumerCl, providerCl client.Client, consumer, provider string) peeringState {
	t.Helper()
	p := peeringState{tenant: &authv1beta1.Tenant{}, identity: &authv1beta1.Identity{}}
	if err := providerCl.Get(ctx, types.NamespacedName{Namespace: consts.TenantNamespace(consumer), Name: consumer}, p.tenant); err != nil {
		t.Fatalf("the Tenant of %s: %v", consumer, err)
	}
	if err := consumerCl.Get(ctx, types.NamespacedName{Namespace: consts.TenantNamespace(provider), Name: consts.IdentityName(provider)}, p.identity); err != nil {
		t.Fatalf("the Identity for %s: %v", provider, err)
	}
	return p
}

// compareObjects checks the two paths made the same objects, but for what
// differs each time: the certificate request and signature (new each
// signing) and the certificate (issued for each request).
func compareObjects(t *testing.T, manual, peered peeringState) {
	t.Helper()
	tm, tp := manual.tenant.Spec.DeepCopy(), peered.tenant.Spec.DeepCopy()
	tm.CSR, tm.Signature, tp.CSR, tp.Signature = nil, nil, nil, nil
	if !equality.Semantic.DeepEqual(tm, tp) || !equality.Semantic.DeepEqual(manual.tenant.Labels, peered.tenant.Labels) {
		t.Errorf("Tenant: manual %+v %v, peer %+v %v", tm, manual.tenant.Labels, tp, peered.tenant.Labels)
	}
	im, ip := manual.identity.Spec.DeepCopy(), peered.identity.Spec.DeepCopy()
	im.AuthParams.SignedCRT, ip.AuthParams.SignedCRT = nil, nil
	if !equality.Semantic.DeepEqual(im, ip) || !equality.Semantic.DeepEqual(manual.identity.Labels, peered.identity.Labels) {
		t.Errorf("Identity: manual %+v %v, peer %+v %v", im, manual.identity.Labels, ip, peered.identity.Labels)
	}
}

// outputJSON runs, with -o json, the command line runs has for each
// command of liqoctl's tree that takes -o (and fails for one it lacks),
// and checks that each printed one JSON object: the manifests with their
// kind and no status or server-set metadata.
func outputJSON(t *testing.T, runs map[string][]string, liqo func(args ...string) string) {
	t.Helper()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if o := c.Flags().Lookup("output"); o != nil && o.Value.Type() == "format" {
			if _, ok := runs[c.CommandPath()]; !ok {
				t.Errorf("%s takes -o, and is not run here with -o json", c.CommandPath())
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(liqoctl.NewRootCommand())
	for path, args := range runs {
		out := liqo(append(args, "-o", "json")...)
		var doc map[string]any
		if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc) == 0 {
			t.Errorf("%s -o json: not a JSON object (%v):\n%s", path, err, out)
			continue
		}
		kind, _ := doc["kind"].(string)
		if kind == "" {
			continue // a document: info, version
		}
		meta, _ := doc["metadata"].(map[string]any)
		for _, k := range []string{"uid", "resourceVersion", "managedFields", "creationTimestamp"} {
			if _, ok := meta[k]; ok {
				t.Errorf("%s -o json: the %s manifest has metadata.%s", path, kind, k)
			}
		}
		if _, ok := doc["status"]; ok || meta["name"] == nil {
			t.Errorf("%s -o json: the %s manifest has a status or no name:\n%s", path, kind, out)
		}
	}
}
