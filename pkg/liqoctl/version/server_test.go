package version

import (
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func TestImageVersion(t *testing.T) {
	for image, want := range map[string]string{
		"ghcr.io/liqo-go/liqo-controller-manager:v1.2.3":            "v1.2.3",
		"liqo-controller-manager:v1.2.3":                            "v1.2.3",
		"localhost:5000/liqo/liqo-controller-manager:v1.2.3-rc.1":   "v1.2.3-rc.1",
		"localhost:5000/liqo/liqo-controller-manager":               "latest",
		"liqo-controller-manager":                                   "latest",
		"ghcr.io/liqo-go/liqo-controller-manager:v1.2.3@sha256:abc": "v1.2.3",
		"ghcr.io/liqo-go/liqo-controller-manager@sha256:abc":        "sha256:abc",
		"localhost:5000/liqo-controller-manager@sha256:abc":         "sha256:abc",
	} {
		if got := imageVersion(image); got != want {
			t.Errorf("imageVersion(%q) = %q, want %q", image, got, want)
		}
	}
}

// deployment is a controller manager Deployment in namespace with the
// given containers, as name=image pairs.
func deployment(namespace string, containers ...string) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: Deployment, Namespace: namespace}}
	for i := 0; i+1 < len(containers); i += 2 {
		d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers,
			corev1.Container{Name: containers[i], Image: containers[i+1]})
	}
	return d
}

func TestServerVersion(t *testing.T) {
	for _, tc := range []struct {
		name      string
		objects   []runtime.Object
		namespace string
		want      string
		wantErr   string
	}{
		{name: "installed", namespace: "liqo",
			objects: []runtime.Object{deployment("liqo", Container, "ghcr.io/liqo-go/liqo-controller-manager:v1.2.3")},
			want:    "v1.2.3"},
		{name: "the controller manager's container among others", namespace: "liqo",
			objects: []runtime.Object{deployment("liqo", "proxy", "envoy:v1.30", Container, "ghcr.io/liqo-go/liqo-controller-manager:v1.2.3")},
			want:    "v1.2.3"},
		{name: "another install namespace", namespace: "liqo-system",
			objects: []runtime.Object{deployment("liqo", Container, "x:v1"), deployment("liqo-system", Container, "x:v2")},
			want:    "v2"},
		{name: "no Deployment", namespace: "liqo", want: NotInstalled},
		{name: "installed in another namespace only", namespace: "liqo",
			objects: []runtime.Object{deployment("liqo-system", Container, "x:v2")}, want: NotInstalled},
		{name: "no controller-manager container", namespace: "liqo",
			objects: []runtime.Object{deployment("liqo", "manager", "x:v1")},
			wantErr: `the Deployment liqo/liqo-controller-manager has no container "controller-manager"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ServerVersion(t.Context(), fake.NewClientset(tc.objects...), tc.namespace)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %q, %v: want the error %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v: want %q", got, err, tc.want)
			}
		})
	}
}

// TestServerVersionForbidden: an error other than NotFound is not taken for
// a missing install.
func TestServerVersionForbidden(t *testing.T) {
	cs := fake.NewClientset()
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, Deployment, errors.New("RBAC"))
	cs.PrependReactor("get", "deployments", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, forbidden
	})
	got, err := ServerVersion(t.Context(), cs, "liqo")
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "reading Deployment liqo/liqo-controller-manager") {
		t.Errorf("got %q, %v: want the Forbidden error, naming the Deployment", got, err)
	}
}
