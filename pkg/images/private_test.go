package images

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// TestPrivateRepos serves a registry whose private/ repositories need a
// password and pushes and pulls through it over HTTP with
// go-containerregistry's remote, as a kubelet's runtime would: with the
// right credentials, with wrong ones and with none.
func TestPrivateRepos(t *testing.T) {
	guard := PrivateRepos{Prefix: "private/", User: "alice", Password: "s3cret"}
	_, host := startRegistry(t, guard)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	img, err := random.Image(1024, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := Push(ctx, host, "docker.io/private/app:v1", img); !isUnauthorized(err) {
		t.Errorf("push without credentials: %v, want 401 Unauthorized", err)
	}
	if err := PushAs(ctx, host, "docker.io/private/app:v1", img, "alice", "wrong"); !isUnauthorized(err) {
		t.Errorf("push with a wrong password: %v, want 401 Unauthorized", err)
	}
	if err := PushAs(ctx, host, "docker.io/private/app:v1", img, "alice", "s3cret"); err != nil {
		t.Fatalf("push with the credentials: %v", err)
	}
	if err := Push(ctx, host, "docker.io/library/app:v1", img); err != nil {
		t.Fatalf("push to an open repository: %v", err)
	}

	pull := func(repo string, auth authn.Authenticator) error {
		ref, err := name.ParseReference(host+"/"+repo+":v1", name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		pulled, err := remote.Image(ref, remote.WithContext(ctx), remote.WithAuth(auth))
		if err != nil {
			return err
		}
		if got, want := digestOf(t, pulled), digestOf(t, img); got != want {
			t.Errorf("%s: pulled %s, pushed %s", repo, got, want)
		}
		return nil
	}
	for _, c := range []struct {
		what, repo string
		auth       authn.Authenticator
		refused    bool
	}{
		{"private, anonymous", "private/app", authn.Anonymous, true},
		{"private, wrong user", "private/app", &authn.Basic{Username: "bob", Password: "s3cret"}, true},
		{"private, wrong password", "private/app", &authn.Basic{Username: "alice", Password: "guess"}, true},
		{"private, the credentials", "private/app", &authn.Basic{Username: "alice", Password: "s3cret"}, false},
		{"open, anonymous", "library/app", authn.Anonymous, false},
	} {
		err := pull(c.repo, c.auth)
		if c.refused && !isUnauthorized(err) {
			t.Errorf("%s: pull %v, want 401 Unauthorized", c.what, err)
		}
		if !c.refused && err != nil {
			t.Errorf("%s: pull %v", c.what, err)
		}
	}

	// The answer a kubelet's runtime reads: a Basic challenge, as from a
	// distribution registry; the ping of /v2/ stays open.
	for _, c := range []struct {
		path string
		want int
	}{
		{"/v2/", http.StatusOK},
		{"/v2/private/app/manifests/v1", http.StatusUnauthorized},
		{"/v2/private/app/tags/list", http.StatusUnauthorized},
		{"/v2/./private/app/manifests/v1", http.StatusBadRequest},
		{"/v2//private/app/manifests/v1", http.StatusBadRequest},
	} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+c.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Go's client would clean the path itself; send it as written.
		req.URL.Opaque = c.path
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("GET %s: %s, want %d", c.path, resp.Status, c.want)
		}
		if c.want == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), `Basic realm=`) {
			t.Errorf("GET %s: challenge %q, want Basic", c.path, resp.Header.Get("WWW-Authenticate"))
		}
	}
}

// isUnauthorized tells whether err is the registry's 401.
func isUnauthorized(err error) bool {
	var te *transport.Error
	return errors.As(err, &te) && te.StatusCode == http.StatusUnauthorized
}
