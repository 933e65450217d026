package images

import (
	"context"
	"fmt"
	"net/http"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// MirrorRef is where the image known upstream as upstream lives on a mirror
// registry at host:port (plain HTTP): the same repository path and tag (or
// digest), with the upstream registry host dropped.
//
// That is the path containerd asks a mirror for. With a registry configured
// (hosts.toml) as the mirror of docker.io, registry.k8s.io and ghcr.io, a
// pull of docker.io/library/busybox:latest becomes
// GET /v2/library/busybox/manifests/latest?ns=docker.io on the mirror, and
// registry.k8s.io/coredns/coredns:v1.14.7 becomes
// /v2/coredns/coredns/manifests/v1.14.7?ns=registry.k8s.io. The upstream
// host survives only in the ns parameter, which a plain registry ignores.
// So:
//
//   - docker.io/library/busybox:latest → <host>/library/busybox:latest
//     (Docker Hub's short names get their "library/" prefix first);
//   - registry.k8s.io/pause:3.10 → <host>/pause:3.10;
//   - registry.k8s.io/coredns/coredns:v1.14.7 → <host>/coredns/coredns:v1.14.7.
//
// The consequence is that the mirrored upstreams share one namespace on the
// mirror: docker.io/coredns/coredns:v1.14.7 and
// registry.k8s.io/coredns/coredns:v1.14.7 are the same image there, the
// last one pushed. Publish each repository path under one upstream only.
func MirrorRef(mirror, upstream string) (name.Reference, error) {
	ref, err := name.ParseReference(upstream)
	if err != nil {
		return nil, fmt.Errorf("image name %q: %w", upstream, err)
	}
	repo := ref.Context().RepositoryStr()
	if d, ok := ref.(name.Digest); ok {
		return name.NewDigest(mirror+"/"+repo+"@"+d.DigestStr(), name.Insecure)
	}
	return name.NewTag(mirror+"/"+repo+":"+ref.Identifier(), name.Insecure)
}

// Push publishes t, a v1.Image or a v1.ImageIndex (with its images), under
// the upstream name on the plain-HTTP registry at host:port, where
// MirrorRef puts it: Push(ctx, "127.0.0.1:5000",
// "docker.io/library/busybox:latest", img) writes library/busybox:latest.
// Blobs the registry already holds are not sent again.
func Push(ctx context.Context, registry, upstream string, t remote.Taggable) error {
	return push(ctx, registry, upstream, t, authn.Anonymous)
}

// PushAs is Push with the credentials of user on the registry, for the
// repositories it keeps private (see PrivateRepos).
func PushAs(ctx context.Context, registry, upstream string, t remote.Taggable, user, password string) error {
	return push(ctx, registry, upstream, t, &authn.Basic{Username: user, Password: password})
}

func push(ctx context.Context, registry, upstream string, t remote.Taggable, auth authn.Authenticator) error {
	ref, err := MirrorRef(registry, upstream)
	if err != nil {
		return err
	}
	switch t.(type) {
	case v1.Image, v1.ImageIndex:
	default:
		return fmt.Errorf("pushing %s: a %T is neither an image nor an index", upstream, t)
	}
	if err := remote.Push(ref, t, remote.WithContext(ctx), remote.WithTransport(directTransport()), remote.WithAuth(auth)); err != nil {
		return fmt.Errorf("pushing %s to %s: %w", upstream, registry, err)
	}
	return nil
}

// directTransport is remote's default transport without a proxy: the
// registry is a local one (on loopback or in a network namespace of this
// machine), which an HTTP(S)_PROXY of the environment could not reach.
func directTransport() http.RoundTripper {
	t := remote.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	return t
}
