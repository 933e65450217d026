package peeringuser

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/version"
)

const apiServerURLFlag = "--api-server-url"

// ServerURL is the provider's API server URL as its peers see it: override
// if given, else the controller manager's --api-server-url (the chart
// sets it; it is what the provider puts in its consumers' credentials),
// else the kubeconfig's server. It says which it took.
func ServerURL(ctx context.Context, c *factory.Cluster, override string) (string, string, error) {
	if override != "" {
		u, err := url.Parse(override)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			return "", "", fmt.Errorf("--api-server-url %q is not an https:// URL", override)
		}
		return override, "--api-server-url", nil
	}
	d, err := c.Clientset.AppsV1().Deployments(c.Namespace).Get(ctx, version.Deployment, metav1.GetOptions{})
	switch {
	case err == nil:
		for _, ctr := range d.Spec.Template.Spec.Containers {
			if v := argValue(ctr.Args, apiServerURLFlag); v != "" {
				return v, "the controller manager's " + apiServerURLFlag, nil
			}
		}
	case !apierrors.IsNotFound(err):
		return "", "", fmt.Errorf("reading the controller manager's Deployment for its %s: %w", apiServerURLFlag, err)
	}
	return c.Config.Host, "the kubeconfig's server", nil
}

// argValue finds flag's value in args, as --flag=value or --flag value.
func argValue(args []string, flag string) string {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v
		}
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// ClusterCA is the CA that the API server's certificate chains to: the
// kubeconfig's (what the controller manager gives consumers, too), else
// the one the token controller put in the peering user's token Secret.
func ClusterCA(c *factory.Cluster, tokenCA []byte) ([]byte, error) {
	switch {
	case len(c.Config.CAData) > 0:
		return c.Config.CAData, nil
	case c.Config.CAFile != "":
		b, err := os.ReadFile(c.Config.CAFile)
		if err != nil {
			return nil, fmt.Errorf("reading the kubeconfig's CA: %w", err)
		}
		return b, nil
	case len(tokenCA) > 0:
		return tokenCA, nil
	}
	return nil, fmt.Errorf("no CA for the API server: the kubeconfig names none and the token Secret holds none")
}
