package controllermanager

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/liqo-go/liqo/pkg/kit"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
)

// TestMetricsNeedAuthorization runs the controller manager with its metrics
// endpoint on, as the chart does, and scrapes it (issue 30, finding 8): an
// anonymous request is refused (401), and so is a ServiceAccount's that
// may not get /metrics (403); one bound to the chart's metrics reader role
// gets the metrics. Before, anyone reaching the pod read them over HTTP.
func TestMetricsNeedAuthorization(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tb, err := testbed.Start(ctx, testbed.Options{}, testbed.ClusterSpec{Name: "metrics"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tb.Stop)
	cfg := tb.Clusters[0].Config
	cs := kubernetes.NewForConfigOrDie(cfg)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	o := DefaultOptions()
	o.ClusterID, o.MetricsAddr, o.Logger = "metrics", addr, testbed.TestLogger()
	mctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		RunLocal(mctx, cfg, o, func(err error) { t.Logf("controller manager: %v", err) })
	}()
	t.Cleanup(func() { stop(); <-done })

	// The chart's reader role, and two ServiceAccounts: one bound to it.
	const ns = "default"
	reader := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: kit.MetricsReaderClusterRole},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, reader, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	token := func(name string) string {
		t.Helper()
		if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}},
			metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}
	scraper, nosy := token("prometheus"), token("nosy")
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "prometheus"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: reader.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "prometheus", Namespace: ns}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The certificate is the manager's own, self-signed: the caller
	// checks who answers by other means (a ServiceMonitor's tlsConfig).
	httpc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec
	scrape := func(bearer string) (int, string, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/metrics", nil)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := httpc.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), nil
	}
	harness.Eventually(ctx, t, "the metrics endpoint serving the reader", func() (bool, error) {
		code, body, err := scrape(scraper)
		if err != nil || code != http.StatusOK {
			return false, fmt.Errorf("%d %.200s (%v)", code, body, err)
		}
		return strings.Contains(body, "controller_runtime_"), nil
	})
	if code, body, err := scrape(""); err != nil || code != http.StatusUnauthorized {
		t.Errorf("an anonymous scrape: %d %.200s (%v), want 401", code, body, err)
	}
	if code, body, err := scrape(nosy); err != nil || code != http.StatusForbidden {
		t.Errorf("a scrape by a ServiceAccount without the reader role: %d %.200s (%v), want 403", code, body, err)
	}
	// Plain HTTP gets nothing either.
	if resp, err := httpc.Get("http://" + addr + "/metrics"); err == nil {
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("the metrics are served over plain HTTP")
		}
	}
}
