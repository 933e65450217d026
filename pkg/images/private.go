package images

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"path"
	"strings"
)

// PrivateRepos keeps the repositories whose path starts with Prefix (for
// instance "private/") behind HTTP Basic authentication with one user and
// password, and leaves every other repository open, so that one registry
// can serve both the images everyone pulls and an image only holders of a
// pull secret may pull. A request under Prefix without the right
// credentials gets what a distribution registry answers: 401 with a Basic
// challenge, which containerd and go-containerregistry's remote answer by
// retrying with the credentials they were given, if any.
//
// Every request naming a guarded repository is guarded, but the registry
// keeps blobs by digest alone: a client that already knows a private
// layer's digest can read it through an open repository. What the guard
// decides is who may resolve a private image's name, which is what a
// kubelet asks first.
type PrivateRepos struct {
	// Prefix is the start of the guarded repository paths, without the
	// leading "/v2/"; empty guards nothing.
	Prefix string
	// User and Password are the only credentials accepted.
	User, Password string
}

// realm is what the challenge names; clients only echo it.
const realm = "liqo-testbed"

// Wrap returns h with the repositories under p.Prefix guarded; h itself
// when p guards nothing.
func (p PrivateRepos) Wrap(h http.Handler) http.Handler {
	if p.Prefix == "" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The registry takes the repository from the raw path segments:
		// a path such as /v2/./private/x or /v2//private/x names another
		// repository for it, but one a check of the cleaned path might
		// misjudge. No registry client sends one.
		if up := r.URL.Path; path.Clean(up) != strings.TrimSuffix(up, "/") {
			http.Error(w, "unclean path", http.StatusBadRequest)
			return
		}
		if p.guards(r.URL.Path) && !p.authorized(r) {
			unauthorized(w)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// guards tells whether a request for urlPath reads or writes a guarded
// repository.
func (p PrivateRepos) guards(urlPath string) bool {
	repo, ok := strings.CutPrefix(urlPath, "/v2/")
	return ok && strings.HasPrefix(repo, p.Prefix)
}

// authorized compares in constant time, as a password check should.
func (p PrivateRepos) authorized(r *http.Request) bool {
	user, password, ok := r.BasicAuth()
	return ok &&
		subtle.ConstantTimeCompare([]byte(user), []byte(p.User)) == 1 &&
		subtle.ConstantTimeCompare([]byte(password), []byte(p.Password)) == 1
}

// unauthorized answers as a distribution registry does, so that a
// client's error names the cause (containerd reports "401 Unauthorized").
func unauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", fmt.Sprintf("Basic realm=%q", realm))
	w.Header().Set("Docker-Distribution-API-Version", "registry/2.0")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write([]byte(`{"errors":[{"code":"UNAUTHORIZED","message":"authentication required","detail":null}]}` + "\n"))
}
