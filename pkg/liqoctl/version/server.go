package version

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

const (
	// Deployment is the controller manager's Deployment in the install
	// namespace; its image tag is the installed version of Liqo.
	Deployment = "liqo-controller-manager"
	// Container is the controller manager's container in Deployment.
	Container = "controller-manager"
	// NotInstalled is the server version of a cluster whose install
	// namespace holds no Deployment.
	NotInstalled = "(not installed)"
)

// ServerVersion returns the version of Liqo installed in namespace: the
// image tag of Container in Deployment, or NotInstalled when there is no
// such Deployment. A Deployment without Container is an error, as is any
// failure to read it other than its absence.
func ServerVersion(ctx context.Context, cs kubernetes.Interface, namespace string) (string, error) {
	d, err := cs.AppsV1().Deployments(namespace).Get(ctx, Deployment, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return NotInstalled, nil
	}
	if err != nil {
		return "", fmt.Errorf("reading Deployment %s/%s: %w", namespace, Deployment, err)
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == Container {
			return imageVersion(c.Image), nil
		}
	}
	return "", fmt.Errorf("the Deployment %s/%s has no container %q: is it Liqo's controller manager?", namespace, Deployment, Container)
}

// imageVersion is the tag of an image reference; for one without a tag,
// its digest, else "latest", the tag a container runtime pulls then.
func imageVersion(image string) string {
	name, digest, _ := strings.Cut(image, "@")
	// The tag follows the last colon of the last path component: a colon
	// before a slash separates a registry's host from its port.
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		return name[i+1:]
	}
	if digest != "" {
		return digest
	}
	return "latest"
}
