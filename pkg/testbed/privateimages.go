package testbed

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/liqo-go/liqo/pkg/images"
)

// PrivatePrefix is the part of every real-node cluster's registry that
// needs credentials (RegistryCredentials): an image pushed there runs only
// in pods whose pull secrets hold them, as a private image on a real
// registry does. The rest of the registry stays open.
const PrivatePrefix = "private/"

// registryUser is the one user of the registry's private part; its
// password is drawn per cluster.
const registryUser = "testbed"

// newRegistryGuard draws the password of the cluster's private images.
func newRegistryGuard() images.PrivateRepos {
	return images.PrivateRepos{Prefix: PrivatePrefix, User: registryUser, Password: rand.Text()}
}

// RegistryCredentials are the user and password the cluster's registry
// asks for under PrivatePrefix: what a docker-registry Secret for
// NodeRegistryAddr must hold. Empty without real nodes.
func (c *Cluster) RegistryCredentials() (user, password string) {
	if c.net == nil {
		return "", ""
	}
	return c.net.registryGuard.User, c.net.registryGuard.Password
}

// NodeRegistryAddr is the cluster's registry as its nodes reach it
// (host:port on the underlay, plain HTTP). An image named after it, not
// after a mirrored upstream, is the only kind a kubelet sends pull
// secrets for: containerd hands the kubelet's credentials only to the
// host the image names, never to a mirror. Empty without real nodes.
func (c *Cluster) NodeRegistryAddr() string {
	if c.net == nil {
		return ""
	}
	return c.registryAddr()
}

// PushPrivate publishes t (an image or an index) as repoTag (such as
// "app:v1") in the private part of the cluster's registry, and returns the
// name pods run it by: <NodeRegistryAddr>/private/<repoTag>.
func (c *Cluster) PushPrivate(ctx context.Context, repoTag string, t remote.Taggable) (string, error) {
	if c.RegistryAddr() == "" {
		return "", fmt.Errorf("cluster %s has no registry: private images need real nodes", c.Name)
	}
	ref := c.NodeRegistryAddr() + "/" + PrivatePrefix + repoTag
	user, password := c.RegistryCredentials()
	if err := images.PushAs(ctx, c.RegistryAddr(), ref, t, user, password); err != nil {
		return "", err
	}
	return ref, nil
}
