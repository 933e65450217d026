package kubeletapi

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/deploy/charts/liqo/crds"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/remotecluster"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/pkg/virtualkubelet"
)

// The scene every test shares: on the consumer, pod app in namespace apps
// bound to the virtual node of cluster provider, whose twin, app in
// namespace apps-twin, runs on a kwok node of the provider. The consumer
// reaches the provider as a service account allowed only what the
// provider's offloading role allows in the twin namespace.
const (
	providerID = "provider"
	vnodeName  = "liqo-provider"
	localNS    = "apps"
	twinNS     = "apps-twin"
	podName    = "app"
)

var (
	consumer, provider *testbed.Cluster
	// cl reads and writes the consumer's objects.
	cl     client.Client
	server *Server
)

func TestMain(m *testing.M) {
	testbed.Main(m, func(tb *testbed.Testbed) {
		consumer, provider = tb.Cluster("consumer"), tb.Cluster("provider")
		if err := setUp(); err != nil {
			fmt.Fprintln(os.Stderr, "setting up the scene:", err)
			tb.Stop()
			os.Exit(1)
		}
	},
		testbed.ClusterSpec{Name: "consumer", Nodes: []testbed.NodePool{{Count: 1}}},
		testbed.ClusterSpec{Name: "provider", Nodes: []testbed.NodePool{{Count: 1}}},
	)
}

func setUp() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	kubeconfig, err := setUpProvider(ctx)
	if err != nil {
		return fmt.Errorf("provider: %w", err)
	}
	if err := setUpConsumer(ctx, kubeconfig); err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	resolver := &PodResolver{Reader: cl, Remotes: remotecluster.NewRegistry(cl, remotecluster.Options{})}
	server, err = New(Config{Client: consumer.Client(), Resolver: resolver, Usage: resolver, Logger: testLogger()})
	if err != nil {
		return err
	}
	// Both run until the process ends, after the clusters stopped.
	go func() {
		if err := server.Start(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "kubelet API:", err)
		}
	}()
	ip, port, err := server.Open(vnodeName)
	if err != nil {
		return err
	}
	remote, err := remotecluster.New(providerID, "", provider.Config, remotecluster.Options{})
	if err != nil {
		return err
	}
	go func() {
		cfg := virtualkubelet.NodeConfig{Name: vnodeName, RemoteClusterID: providerID, Address: ip, Port: port}
		_ = virtualkubelet.RunNode(context.Background(), consumer.Client(), remote, cfg, nil)
	}()
	// Ready once the node publishes the endpoint and the server presents a
	// certificate of the cluster's CA for it. The pod comes after the node:
	// the pod garbage collector deletes pods bound to nodes that do not exist.
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		n, err := consumer.Client().CoreV1().Nodes().Get(ctx, vnodeName, metav1.GetOptions{})
		if err != nil || n.Status.DaemonEndpoints.KubeletEndpoint.Port != port {
			return false, nil
		}
		return dialVerified(ip, port) == nil, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the virtual node and the kubelet API: %w", err)
	}
	return cl.Create(ctx, boundPod(localNS, podName, vnodeName))
}

// setUpProvider runs the twin pod and returns the kubeconfig of a service
// account bound, in the twin namespace, to the provider's offloading rules
// for pods.
func setUpProvider(ctx context.Context) ([]byte, error) {
	cs := provider.Client()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: twinNS}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: podName, Namespace: twinNS},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
	}
	if _, err := cs.CoreV1().Pods(twinNS).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "liqo-consumer", Namespace: twinNS}}
	if _, err := cs.CoreV1().ServiceAccounts(twinNS).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "offloading", Namespace: twinNS},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"pods/exec", "pods/attach", "pods/portforward"}, Verbs: []string{"create", "get"}},
		},
	}
	if _, err := cs.RbacV1().Roles(twinNS).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "offloading", Namespace: twinNS},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: twinNS}},
	}
	if _, err := cs.RbacV1().RoleBindings(twinNS).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	token, err := serviceAccountToken(ctx, cs, twinNS, sa.Name)
	if err != nil {
		return nil, err
	}
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(twinNS).Get(ctx, podName, metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for the twin pod to run: %w", err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["provider"] = &clientcmdapi.Cluster{Server: provider.Server, CertificateAuthorityData: provider.Config.CAData}
	kc.AuthInfos["consumer"] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts["provider"] = &clientcmdapi.Context{Cluster: "provider", AuthInfo: "consumer"}
	kc.CurrentContext = "provider"
	return clientcmd.Write(*kc)
}

// setUpConsumer makes what the peering and the namespace offloading would
// have: the Identity with its kubeconfig and the NamespaceMap naming the
// twin namespace.
func setUpConsumer(ctx context.Context, kubeconfig []byte) error {
	if err := crds.Install(ctx, consumer.Config); err != nil {
		return err
	}
	var err error
	if cl, err = client.New(consumer.Config, client.Options{Scheme: apis.NewScheme()}); err != nil {
		return err
	}
	tenant := consts.TenantNamespace(providerID)
	for _, ns := range []string{tenant, localNS} {
		if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "provider-kubeconfig", Namespace: tenant},
		Data:       map[string][]byte{consts.KubeconfigKey: kubeconfig},
	}
	if err := cl.Create(ctx, secret); err != nil {
		return err
	}
	id := &authv1beta1.Identity{
		ObjectMeta: metav1.ObjectMeta{Name: consts.IdentityName(providerID), Namespace: tenant},
		Spec:       authv1beta1.IdentitySpec{ClusterID: providerID, Namespace: ptr.To("liqo-tenant-consumer")},
	}
	if err := cl.Create(ctx, id); err != nil {
		return err
	}
	id.Status.KubeconfigSecretRef = &corev1.LocalObjectReference{Name: secret.Name}
	if err := cl.Status().Update(ctx, id); err != nil {
		return err
	}
	key := consts.NamespaceMapKey(providerID)
	nm := &offv1beta1.NamespaceMap{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}
	if err := cl.Create(ctx, nm); err != nil {
		return err
	}
	nm.Status.CurrentMapping = map[string]offv1beta1.RemoteNamespaceStatus{
		localNS: {RemoteNamespace: twinNS, Phase: offv1beta1.MappingAccepted},
	}
	return cl.Status().Update(ctx, nm)
}

// boundPod is a pod bound to node, tolerating the virtual-node taint as the
// offloading webhook would make it.
func boundPod(namespace, name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: corev1.PodSpec{
			NodeName:    node,
			Containers:  []corev1.Container{{Name: "main", Image: "busybox"}},
			Tolerations: []corev1.Toleration{{Key: consts.VirtualNodeTaintKey, Operator: corev1.TolerationOpExists}},
		},
	}
}

func serviceAccountToken(ctx context.Context, cs kubernetes.Interface, namespace, name string) (string, error) {
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authnv1.TokenRequest{
		Spec: authnv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token of service account %s/%s: %w", namespace, name, err)
	}
	return tr.Status.Token, nil
}

// dialVerified opens a TLS connection to the kubelet API, verifying its
// certificate against the consumer's CA for the IP, as the API server does.
func dialVerified(ip string, port int32) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(consumer.Config.CAData)
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp",
		net.JoinHostPort(ip, strconv.Itoa(int(port))), &tls.Config{RootCAs: pool, ServerName: ip, MinVersion: tls.VersionTLS12})
	if err != nil {
		return err
	}
	return conn.Close()
}

func testLogger() logr.Logger {
	return funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{Verbosity: 1})
}
