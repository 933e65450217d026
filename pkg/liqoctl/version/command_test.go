package version_test

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/liqo-go/liqo/pkg/liqoctl"
	"github.com/liqo-go/liqo/pkg/liqoctl/version"
)

// kubeconfigFor writes a kubeconfig whose only cluster is server.
func kubeconfigFor(t *testing.T, server string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: server}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "c"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// apiServer answers /version and GETs of the controller manager's
// Deployment in the namespace it is installed in (none when namespace is
// ""), as an API server would; with forbidden, it refuses those GETs.
func apiServer(t *testing.T, namespace, image string, forbidden bool) string {
	t.Helper()
	writeJSON := func(w http.ResponseWriter, code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		if err := json.NewEncoder(w).Encode(v); err != nil {
			t.Error(err)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/version" {
			writeJSON(w, http.StatusOK, map[string]string{"major": "1", "minor": "34", "gitVersion": "v1.34.0"})
			return
		}
		parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		// apis/apps/v1/namespaces/NS/deployments/NAME
		if r.Method != http.MethodGet || len(parts) != 7 || parts[0] != "apis" || parts[1] != "apps" || parts[3] != "namespaces" || parts[5] != "deployments" {
			http.NotFound(w, r)
			return
		}
		ns, name := parts[4], parts[6]
		gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
		switch {
		case forbidden:
			st := apierrors.NewForbidden(gr, name, nil).Status()
			writeJSON(w, http.StatusForbidden, &st)
		case ns != namespace || name != version.Deployment:
			st := apierrors.NewNotFound(gr, name).Status()
			writeJSON(w, http.StatusNotFound, &st)
		default:
			d := appsv1.Deployment{
				TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			}
			d.Spec.Template.Spec.Containers = []corev1.Container{{Name: version.Container, Image: image}}
			writeJSON(w, http.StatusOK, &d)
		}
	}))
	t.Cleanup(srv.Close)
	return kubeconfigFor(t, srv.URL)
}

// unreachable is a kubeconfig naming a port nothing listens on.
func unreachable(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return kubeconfigFor(t, "http://"+addr)
}

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	// No kubeconfig but the one the test passes.
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	var out, errOut bytes.Buffer
	code = liqoctl.Run(t.Context(), append([]string{"version"}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestVersionCommand(t *testing.T) {
	client := "Client version: " + version.Version() + "\n"
	installed := apiServer(t, "liqo", "ghcr.io/liqo-go/liqo-controller-manager:v1.2.3", false)
	for _, tc := range []struct {
		name               string
		args               []string
		wantCode           int
		wantOut, wantError string
	}{
		{name: "client only", args: []string{"--client", "--kubeconfig", unreachable(t)}, wantOut: client},
		{name: "installed", args: []string{"--kubeconfig", installed},
			wantOut: client + "Server version: v1.2.3\n"},
		{name: "another namespace: not installed", args: []string{"--kubeconfig", installed, "-n", "liqo-system"},
			wantOut: client + "Server version: (not installed)\n"},
		{name: "installed in the namespace given", args: []string{"--kubeconfig", apiServer(t, "liqo-system", "x:v2", false), "--namespace", "liqo-system"},
			wantOut: client + "Server version: v2\n"},
		{name: "unreachable: a warning", args: []string{"--kubeconfig", unreachable(t)},
			wantOut: client, wantError: "WARN: server version unknown: the local cluster's API server at http://127.0.0.1:"},
		{name: "no kubeconfig: a warning", args: nil,
			wantOut: client, wantError: "WARN: server version unknown: no kubeconfig for the local cluster"},
		{name: "forbidden: a failure", args: []string{"--kubeconfig", apiServer(t, "liqo", "x:v1", true)},
			wantCode: liqoctl.ExitFailure, wantOut: client, wantError: "Error: reading Deployment liqo/liqo-controller-manager: "},
		{name: "unknown output format", args: []string{"--client", "-o", "xml"},
			wantCode: liqoctl.ExitUsage, wantError: `invalid argument "xml" for "-o, --output" flag: unknown format "xml"`},
		{name: "an argument", args: []string{"extra"}, wantCode: liqoctl.ExitUsage, wantError: "Run 'liqoctl version --help' for usage."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, tc.args...)
			if code != tc.wantCode || out != tc.wantOut {
				t.Errorf("exit %d, stdout %q: want %d, %q (stderr %q)", code, out, tc.wantCode, tc.wantOut, errOut)
			}
			if tc.wantError == "" && errOut != "" || !strings.Contains(errOut, tc.wantError) {
				t.Errorf("stderr %q: want %q", errOut, tc.wantError)
			}
			if strings.HasPrefix(errOut, "WARN:") && strings.Count(errOut, "\n") != 1 {
				t.Errorf("stderr %q: want a one-line warning", errOut)
			}
		})
	}
}

// TestVersionDocument: -o json|yaml print the same document, the server
// version left out when it is unknown.
func TestVersionDocument(t *testing.T) {
	installed := apiServer(t, "liqo", "ghcr.io/liqo-go/liqo-controller-manager:v1.2.3", false)
	for _, tc := range []struct {
		name string
		args []string
		want version.Info
	}{
		{"installed", []string{"--kubeconfig", installed}, version.Info{ClientVersion: version.Version(), ServerVersion: "v1.2.3"}},
		{"not installed", []string{"--kubeconfig", installed, "-n", "elsewhere"}, version.Info{ClientVersion: version.Version(), ServerVersion: version.NotInstalled}},
		{"client only", []string{"--kubeconfig", installed, "--client"}, version.Info{ClientVersion: version.Version()}},
		{"unreachable", []string{"--kubeconfig", unreachable(t)}, version.Info{ClientVersion: version.Version()}},
	} {
		for _, format := range []string{"json", "yaml"} {
			t.Run(tc.name+" "+format, func(t *testing.T) {
				code, out, errOut := run(t, append(tc.args, "-o", format)...)
				if code != 0 {
					t.Fatalf("exit %d, stderr %q", code, errOut)
				}
				var raw map[string]any
				var err error
				if format == "json" {
					err = json.Unmarshal([]byte(out), &raw)
				} else {
					err = yaml.Unmarshal([]byte(out), &raw)
				}
				if err != nil {
					t.Fatalf("%s output %q: %v", format, out, err)
				}
				want := map[string]any{"clientVersion": tc.want.ClientVersion}
				if tc.want.ServerVersion != "" {
					want["serverVersion"] = tc.want.ServerVersion
				}
				if len(raw) != len(want) || raw["clientVersion"] != want["clientVersion"] || raw["serverVersion"] != want["serverVersion"] {
					t.Errorf("%s output %q: want %v", format, out, want)
				}
			})
		}
	}
}
