package kubeletapi

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/go-logr/logr"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// guard authenticates and authorizes every request before next serves it,
// as a kubelet in webhook mode does.
type guard struct {
	authn    authenticator.Request
	authz    authorizer.Authorizer
	resolver Resolver
	log      logr.Logger
	next     http.Handler
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	resp, ok, err := g.authn.AuthenticateRequest(r)
	if err != nil || !ok {
		if err != nil {
			g.log.V(2).Info("unauthenticated kubelet API request", "path", r.URL.Path, "error", err.Error())
		}
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	// Requests about a pod are checked against the pod's node; a pod that
	// cannot be resolved leaves the name empty, which demands the right on
	// every node, and the handler then says what is wrong with the pod.
	// Others (stats, metrics) are about the node whose port they came in on.
	attrs := requestAttributes(resp.User, r, nodeFrom(r.Context()))
	if ns, name, ok := requestPod(r.URL.Path); ok {
		attrs.Name = ""
		if t, err := g.resolver.Resolve(r.Context(), ns, name); err == nil {
			attrs.Name = t.Node
		}
	}
	decision, reason, err := g.authz.Authorize(r.Context(), attrs)
	if err != nil {
		g.log.Error(err, "authorizing a kubelet API request", "user", attrs.User.GetName(), "path", r.URL.Path)
		http.Error(w, fmt.Sprintf("Authorization error (user=%s, verb=%s, resource=nodes, subresource=%s)",
			attrs.User.GetName(), attrs.Verb, attrs.Subresource), http.StatusInternalServerError)
		return
	}
	if decision != authorizer.DecisionAllow {
		g.log.V(2).Info("forbidden kubelet API request", "user", attrs.User.GetName(), "path", r.URL.Path, "reason", reason)
		http.Error(w, fmt.Sprintf("Forbidden (user=%s, verb=%s, resource=nodes, subresource=%s)",
			attrs.User.GetName(), attrs.Verb, attrs.Subresource), http.StatusForbidden)
		return
	}
	g.next.ServeHTTP(w, r)
}

// requestAttributes are what a kubelet asks the authorizer for a request on
// its API: the HTTP method as verb, on a subresource of the node.
func requestAttributes(u user.Info, r *http.Request, node string) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{
		User:            u,
		Verb:            verb(r.Method),
		APIVersion:      "v1",
		Resource:        "nodes",
		Subresource:     subresource(r.URL.Path),
		Name:            node,
		ResourceRequest: true,
		Path:            r.URL.Path,
	}
}

// verb maps the HTTP method to the verb authorized, as the kubelet does.
func verb(method string) string {
	switch method {
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return "get"
}

// subresource maps a path to the node subresource that authorizes it, as
// the kubelet does: logs, exec, attach and port-forward are nodes/proxy.
func subresource(path string) string {
	for _, p := range []struct{ prefix, sub string }{
		{"/stats", "stats"},
		{"/metrics", "metrics"},
		{"/logs", "log"},
		{"/spec", "spec"},
		{"/checkpoint", "checkpoint"},
	} {
		if path == p.prefix || strings.HasPrefix(path, p.prefix+"/") {
			return p.sub
		}
	}
	return "proxy"
}

// requestPod returns the pod that a path about one names
// (/containerLogs, /exec, /attach: {namespace}/{pod}/{container};
// /portForward: {namespace}/{pod}).
func requestPod(path string) (namespace, name string, ok bool) {
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if len(parts) < 3 || parts[1] == "" || parts[2] == "" {
		return "", "", false
	}
	switch parts[0] {
	case "containerLogs", "exec", "attach", "portForward":
		return parts[1], parts[2], true
	}
	return "", "", false
}
