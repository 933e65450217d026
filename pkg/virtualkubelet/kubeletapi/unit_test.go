package kubeletapi

import (
	"context"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	vkapi "github.com/virtual-kubelet/virtual-kubelet/node/api"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

func TestRequestPod(t *testing.T) {
	tests := []struct {
		path, namespace, name string
		ok                    bool
	}{
		{"/containerLogs/apps/web/main", "apps", "web", true},
		{"/exec/apps/web/main", "apps", "web", true},
		{"/attach/apps/web/main", "apps", "web", true},
		{"/portForward/apps/web", "apps", "web", true},
		{"/portForward/apps", "", "", false},
		{"/exec/apps//main", "", "", false},
		{"/stats/summary", "", "", false},
		{"/pods", "", "", false},
		{"/run/apps/web/main", "", "", false},
		{"/", "", "", false},
	}
	for _, tc := range tests {
		ns, name, ok := requestPod(tc.path)
		if ns != tc.namespace || name != tc.name || ok != tc.ok {
			t.Errorf("requestPod(%q) = %q, %q, %t; want %q, %q, %t", tc.path, ns, name, ok, tc.namespace, tc.name, tc.ok)
		}
	}
}

func TestSubresource(t *testing.T) {
	tests := map[string]string{
		"/stats/summary":              "stats",
		"/stats":                      "stats",
		"/statsfoo":                   "proxy",
		"/metrics/resource":           "metrics",
		"/metrics":                    "metrics",
		"/logs/kubelet.log":           "log",
		"/spec/":                      "spec",
		"/checkpoint/apps/web/main":   "checkpoint",
		"/containerLogs/apps/web/log": "proxy",
		"/exec/apps/web/main":         "proxy",
		"/portForward/apps/web":       "proxy",
		"/pods":                       "proxy",
	}
	for path, want := range tests {
		if got := subresource(path); got != want {
			t.Errorf("subresource(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestVerb(t *testing.T) {
	tests := map[string]string{
		http.MethodGet: "get", http.MethodHead: "get", http.MethodPost: "create", http.MethodPut: "update",
		http.MethodPatch: "patch", http.MethodDelete: "delete",
	}
	for method, want := range tests {
		if got := verb(method); got != want {
			t.Errorf("verb(%s) = %q, want %q", method, got, want)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	cs := fake.NewClientset()
	r := &PodResolver{}
	tests := []struct {
		name    string
		cfg     Config
		want    Config
		wantErr string
	}{
		{
			name: "defaults advertise the loopback listen address",
			cfg:  Config{Client: cs, Resolver: r},
			want: Config{ListenAddress: "127.0.0.1:0", AdvertiseIP: "127.0.0.1", Certificate: CertificateKubeletServing,
				CommonName: DefaultCommonName, StreamIdleTimeout: DefaultStreamIdleTimeout, Client: cs, Resolver: r},
		},
		{
			name: "all addresses with an advertised IP",
			cfg:  Config{ListenAddress: "0.0.0.0:10250", AdvertiseIP: "10.0.0.7", Certificate: CertificateSelfSigned, Client: cs, Resolver: r},
			want: Config{ListenAddress: "0.0.0.0:10250", AdvertiseIP: "10.0.0.7", Certificate: CertificateSelfSigned,
				CommonName: DefaultCommonName, StreamIdleTimeout: DefaultStreamIdleTimeout, Client: cs, Resolver: r},
		},
		{
			name:    "all addresses without an advertised IP",
			cfg:     Config{ListenAddress: ":10250", Client: cs, Resolver: r},
			wantErr: "the address to advertise to the API server must be given",
		},
		{
			name:    "a host name is no advertised IP",
			cfg:     Config{ListenAddress: "localhost:0", Client: cs, Resolver: r},
			wantErr: "the address to advertise to the API server must be given",
		},
		{
			name:    "an unspecified advertised IP",
			cfg:     Config{AdvertiseIP: "::", Client: cs, Resolver: r},
			wantErr: "is not a specific IP address",
		},
		{
			name:    "no port",
			cfg:     Config{ListenAddress: "127.0.0.1", Client: cs, Resolver: r},
			wantErr: "missing port",
		},
		{
			name:    "a named port",
			cfg:     Config{ListenAddress: "127.0.0.1:kubelet", Client: cs, Resolver: r},
			wantErr: "not a number",
		},
		{
			name:    "unknown certificate mode",
			cfg:     Config{Certificate: "acme", Client: cs, Resolver: r},
			wantErr: `certificate mode "acme"`,
		},
		{
			name:    "negative idle timeout",
			cfg:     Config{StreamIdleTimeout: -time.Second, Client: cs, Resolver: r},
			wantErr: "negative stream idle timeout",
		},
		{
			name:    "no resolver",
			cfg:     Config{Client: cs},
			wantErr: "a local client and a resolver are required",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.cfg.withDefaults()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestValidate: the settings alone are checked, as for command-line flags.
func TestValidate(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Errorf("the defaults: %v", err)
	}
	if err := (Config{ListenAddress: "0.0.0.0:10250"}).Validate(); err == nil {
		t.Error("all addresses without an advertised IP passed")
	}
}

func TestLogOptions(t *testing.T) {
	since := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name string
		in   vkapi.ContainerLogOpts
		want *corev1.PodLogOptions
	}{
		{"none", vkapi.ContainerLogOpts{}, &corev1.PodLogOptions{Container: "c"}},
		{
			"all",
			vkapi.ContainerLogOpts{Tail: 10, LimitBytes: 100, Timestamps: true, Follow: true, Previous: true, SinceSeconds: 60},
			&corev1.PodLogOptions{Container: "c", TailLines: ptr.To[int64](10), LimitBytes: ptr.To[int64](100),
				Timestamps: true, Follow: true, Previous: true, SinceSeconds: ptr.To[int64](60)},
		},
		{"since time", vkapi.ContainerLogOpts{SinceTime: since}, &corev1.PodLogOptions{Container: "c", SinceTime: &metav1.Time{Time: since}}},
	}
	for _, tc := range tests {
		if got := logOptions("c", tc.in); !equality.Semantic.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestRemoteError(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	tests := []struct {
		name               string
		err                error
		notFound, badInput bool
	}{
		{"not found", apierrors.NewNotFound(pods, "web"), true, false},
		{"bad request", apierrors.NewBadRequest(`container "main" is waiting to start`), false, true},
		{"forbidden", apierrors.NewForbidden(pods, "web", errors.New("no")), false, false},
		{"other", errors.New("connection refused"), false, false},
	}
	for _, tc := range tests {
		got := remoteError(tc.err)
		if errdefs.IsNotFound(got) != tc.notFound || errdefs.IsInvalidInput(got) != tc.badInput || got.Error() != tc.err.Error() {
			t.Errorf("%s: %v (not found %t, invalid input %t)", tc.name, got, errdefs.IsNotFound(got), errdefs.IsInvalidInput(got))
		}
	}
	if remoteError(nil) != nil {
		t.Error("remoteError(nil) is not nil")
	}
}

// TestSelfSignedCertificate: the self-signed certificate names the
// advertised IP, is for serving only and is renewed at 80 % of its life.
func TestSelfSignedCertificate(t *testing.T) {
	is := &issuer{mode: CertificateSelfSigned, ip: net.ParseIP("127.0.0.9"), commonName: "test"}
	cert, renew, err := is.issue(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	leaf := cert.Leaf
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "127.0.0.9"}); err != nil {
		t.Errorf("the certificate does not verify for its IP: %v", err)
	}
	if leaf.Subject.CommonName != "system:node:test" || len(leaf.ExtKeyUsage) != 1 || leaf.ExtKeyUsage[0] != x509.ExtKeyUsageServerAuth {
		t.Errorf("subject %v, usages %v", leaf.Subject, leaf.ExtKeyUsage)
	}
	life := leaf.NotAfter.Sub(leaf.NotBefore)
	if want := leaf.NotBefore.Add(life * 8 / 10); renew.Sub(want).Abs() > time.Second {
		t.Errorf("renewal at %s, want %s", renew, want)
	}
}
