package kubeletapi

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node/api/statsv1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/utils/ptr"

	"github.com/liqo-go/liqo/pkg/testbed"
)

// kubectl runs the consumer's kubectl in the apps namespace.
func kubectl(ctx context.Context, stdin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, consumer.KubectlPath(), append([]string{"--kubeconfig", consumer.Kubeconfig, "-n", localNS}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}

// TestLogs: kubectl logs and client-go's GetLogs through the consumer's API
// server return the twin's log, with the options passed on.
func TestLogs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	want := provider.PodLogLine() + "\n"
	out, err := kubectl(ctx, "", "logs", podName)
	if err != nil {
		t.Fatal(err)
	}
	if out != want {
		t.Errorf("kubectl logs = %q, want the provider's %q", out, want)
	}

	opts := &corev1.PodLogOptions{Container: "main", Timestamps: true, TailLines: ptr.To[int64](5)}
	raw, err := consumer.Client().CoreV1().Pods(localNS).GetLogs(podName, opts).DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ts, line, ok := strings.Cut(strings.TrimSuffix(string(raw), "\n"), " ")
	if !ok || line != provider.PodLogLine() {
		t.Fatalf("logs with timestamps = %q", raw)
	}
	if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
		t.Errorf("timestamp %q: %v", ts, err)
	}

	_, err = kubectl(ctx, "", "logs", podName, "-c", "sidecar")
	if err == nil || !strings.Contains(err.Error(), "sidecar") {
		t.Errorf("kubectl logs of a container the pod lacks: %v", err)
	}
}

// TestExec: kubectl exec (WebSocket to the API server, which speaks SPDY to
// the kubelet API) and client-go's SPDY executor (passed through to the
// kubelet API) run commands in the twin, with stdin, stdout, stderr and
// failures carried back.
func TestExec(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := kubectl(ctx, "", "exec", podName, "--", "sh", "-c", "echo $"+testbed.ExecClusterEnv)
	if err != nil {
		t.Fatal(err)
	}
	if out != providerID+"\n" {
		t.Errorf("kubectl exec ran in %q, want the provider's pod", out)
	}
	// kwok's exec never sees the end of stdin: head ends the command.
	if out, err := kubectl(ctx, "hello\n", "exec", "-i", podName, "--", "head", "-n1"); err != nil || out != "hello\n" {
		t.Errorf("kubectl exec -i head -n1 = %q, %v; want the input line", out, err)
	}
	// kwok reports a command's failure as an error naming its status, not
	// as an exit code: what matters is that the provider's answer arrives.
	if _, err = kubectl(ctx, "", "exec", podName, "--", "sh", "-c", "exit 3"); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("kubectl exec of exit 3: %v, want the provider's failure", err)
	}

	cs := consumer.Client()
	req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(localNS).Name(podName).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: "main", Command: []string{"sh", "-c", "echo out; echo err >&2; exit 5"},
			Stdout: true, Stderr: true}, scheme.ParameterCodec)
	ex, err := remotecommand.NewSPDYExecutor(consumer.Config, http.MethodPost, req.URL())
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr})
	if err == nil || !strings.Contains(err.Error(), "exit status 5") {
		t.Errorf("SPDY exec: %v, want the provider's failure", err)
	}
	if stdout.String() != "out\n" || stderr.String() != "err\n" {
		t.Errorf("SPDY exec: stdout %q stderr %q", stdout.String(), stderr.String())
	}
}

// TestPortForward: a port-forward through the consumer's API server reaches
// the twin: the provider's greeting, then an echo.
func TestPortForward(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	local, err := testbed.PortForward(ctx, consumer.Config, localNS, podName, 8080)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // every connection is a stream of its own
		conn, err := net.DialTimeout("tcp", local, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
		r := bufio.NewReader(conn)
		if line, err := r.ReadString('\n'); err != nil || line != provider.PortForwardGreeting()+"\n" {
			t.Fatalf("connection %d: greeting %q (%v), want the provider's", i, line, err)
		}
		msg := fmt.Sprintf("ping %d\n", i)
		if _, err := conn.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		if line, err := r.ReadString('\n'); err != nil || line != msg {
			t.Errorf("connection %d: echo %q (%v), want %q", i, line, err, msg)
		}
		_ = conn.Close()
	}
}

// TestAuthentication: callers without credentials, or with a certificate of
// another CA, get 401; the cluster's certificates and tokens are accepted.
func TestAuthentication(t *testing.T) {
	logs := "/containerLogs/" + localNS + "/" + podName + "/main"
	if code, body := call(t, logs, nil, ""); code != http.StatusUnauthorized {
		t.Errorf("no credentials: %d %s, want 401", code, body)
	}
	if code, body := call(t, logs, foreignCertificate(t), ""); code != http.StatusUnauthorized {
		t.Errorf("a certificate of another CA: %d %s, want 401", code, body)
	}
	if code, body := call(t, logs, nil, "not-a-token"); code != http.StatusUnauthorized {
		t.Errorf("an invalid token: %d %s, want 401", code, body)
	}
	admin, err := tls.X509KeyPair(consumer.Config.CertData, consumer.Config.KeyData)
	if err != nil {
		t.Fatal(err)
	}
	if code, body := call(t, logs, &admin, ""); code != http.StatusOK || body != provider.PodLogLine()+"\n" {
		t.Errorf("the cluster admin's certificate: %d %q", code, body)
	}
	if code, body := call(t, "/containerLogs/"+localNS+"/ghost/main", &admin, ""); code != http.StatusNotFound || !strings.Contains(body, "ghost") {
		t.Errorf("a pod that does not exist: %d %q, want 404 naming it", code, body)
	}
}

// TestAuthorization: a user is let in only with the node subresource a
// kubelet demands: nodes/proxy of the pod's node for logs, nodes/stats and
// nodes/metrics of the node whose port the request came in on for the
// node-wide endpoints.
func TestAuthorization(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs := consumer.Client()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "debugger", Namespace: "default"}}
	if _, err := cs.CoreV1().ServiceAccounts("default").Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	token, err := serviceAccountToken(ctx, cs, "default", sa.Name)
	if err != nil {
		t.Fatal(err)
	}
	logs := "/containerLogs/" + localNS + "/" + podName + "/main"
	if code, body := call(t, logs, nil, token); code != http.StatusForbidden || !strings.Contains(body, "subresource=proxy") {
		t.Errorf("without rights: %d %q, want 403 naming nodes/proxy", code, body)
	}

	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "kubeletapi-debugger"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"nodes/proxy"}, ResourceNames: []string{vnodeName}, Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"nodes/stats", "nodes/metrics"}, ResourceNames: []string{vnodeName}, Verbs: []string{"get"}},
		},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: "default"}},
	}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var code int
	var body string
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		code, body = call(t, logs, nil, token)
		return code == http.StatusOK, nil
	})
	if err != nil || body != provider.PodLogLine()+"\n" {
		t.Fatalf("with nodes/proxy of the pod's node: %d %q", code, body)
	}
	// A pod that cannot be resolved needs the right on every node.
	if code, body := call(t, "/containerLogs/"+localNS+"/ghost/main", nil, token); code != http.StatusForbidden {
		t.Errorf("a missing pod with the right on one node: %d %q, want 403", code, body)
	}

	// The provider (simulated nodes) serves no metrics API: the node's
	// usage is valid and empty, not an error.
	code, body = call(t, "/stats/summary", nil, token)
	var summary statsv1alpha1.Summary
	if code != http.StatusOK || json.Unmarshal([]byte(body), &summary) != nil || summary.Node.NodeName != vnodeName || len(summary.Pods) != 0 {
		t.Errorf("/stats/summary: %d %q, want the empty summary of node %s", code, body, vnodeName)
	}
	if code, body := call(t, "/metrics/resource", nil, token); code != http.StatusOK || body != "" {
		t.Errorf("/metrics/resource: %d %q, want no samples", code, body)
	}
	// Another virtual node's port is that node's: the right on this one
	// does not open it.
	const other = "liqo-other"
	defer server.Release(other)
	if code, body := callNode(t, other, "/stats/summary", nil, token); code != http.StatusForbidden || !strings.Contains(body, "subresource=stats") {
		t.Errorf("/stats/summary of node %s with the right on %s only: %d %q, want 403", other, vnodeName, code, body)
	}
}

// TestEndpointPerNode: each virtual node gets a port of its own, kept
// while the node lives, and a fresh one once released.
func TestEndpointPerNode(t *testing.T) {
	_, mine, err := server.Open(vnodeName)
	if err != nil {
		t.Fatal(err)
	}
	_, a, err := server.Open("liqo-a")
	if err != nil {
		t.Fatal(err)
	}
	defer server.Release("liqo-a")
	if _, again, err := server.Open("liqo-a"); err != nil || again != a {
		t.Errorf("opening liqo-a again: port %d (%v), want its port %d", again, err, a)
	}
	if a == mine {
		t.Errorf("liqo-a got port %d, which %s has", a, vnodeName)
	}
	server.Release("liqo-a")
	ip, _, _ := server.Open(vnodeName)
	if _, err := net.DialTimeout("tcp", net.JoinHostPort(ip, strconv.Itoa(int(a))), time.Second); err == nil {
		t.Errorf("port %d of the released node liqo-a still accepts connections", a)
	}
	if _, _, err := server.Open(""); err == nil {
		t.Error("a node without a name got an endpoint")
	}
}

// call sends a GET to the kubelet API of the virtual node with a client
// certificate or a bearer token, verifying the server's certificate
// against the cluster CA.
func call(t *testing.T, path string, cert *tls.Certificate, token string) (int, string) {
	t.Helper()
	return callNode(t, vnodeName, path, cert, token)
}

// callNode is call on node's endpoint.
func callNode(t *testing.T, node, path string, cert *tls.Certificate, token string) (int, string) {
	t.Helper()
	ip, port, err := server.Open(node)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(consumer.Config.CAData)
	tlsCfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if cert != nil {
		tlsCfg.Certificates = []tls.Certificate{*cert}
	}
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsCfg}}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, "https://"+net.JoinHostPort(ip, strconv.Itoa(int(port)))+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// foreignCertificate is a client certificate for system:masters that the
// cluster's CA did not sign.
func foreignCertificate(t *testing.T) *tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "intruder", Organization: []string{"system:masters"}},
		NotBefore:    time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
