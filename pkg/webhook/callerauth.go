package webhook

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// callerAuth lets only the API server through to the admission handlers,
// by its client certificate. Without it, anyone reaching the server's port
// could send reviews no API server sent: a forged ShadowPod create reserves
// its consumer's quota for the reservation's lifetime, refusing the real
// ones.
//
// The TLS layer asks for a certificate and verifies any given against the
// CAs (a certificate they did not sign fails the handshake), and the
// admission handlers refuse requests that gave none. The probe path stays
// open: other replicas call it without a certificate to learn that this
// one answers.
type callerAuth struct {
	cas *x509.CertPool
	// names, if any, are the only common names accepted.
	names []string
	// log says, at most once a minute, that a review came without a
	// certificate: the first sign of an API server whose admission
	// configuration presents none, which fails every call.
	log    logr.Logger
	mu     sync.Mutex
	logged time.Time
}

// newCallerAuth is the authentication o asks for; nil, none.
func newCallerAuth(o ServingOptions, log logr.Logger) (*callerAuth, error) {
	if o.ClientCAFile == "" {
		return nil, nil
	}
	cas, err := o.clientCAs()
	if err != nil {
		return nil, err
	}
	return &callerAuth{cas: cas, names: o.ClientNames, log: log}, nil
}

// configureTLS asks callers for a client certificate signed by the CAs.
func (a *callerAuth) configureTLS(c *tls.Config) {
	if a == nil {
		return
	}
	c.ClientAuth = tls.VerifyClientCertIfGiven
	c.ClientCAs = a.cas
}

// guard refuses to h the requests of callers without an accepted client
// certificate: 401 without one, 403 with a name not accepted.
func (a *callerAuth) guard(h http.Handler) http.Handler {
	if a == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
			a.refused(r)
			http.Error(w, "admission reviews are accepted only with a client certificate signed by the webhook's client CA "+
				"(--webhook-client-ca, chart value webhook.clientAuth): the API server presents one only when its admission configuration says so",
				http.StatusUnauthorized)
			return
		}
		if cn := r.TLS.VerifiedChains[0][0].Subject.CommonName; len(a.names) > 0 && !slices.Contains(a.names, cn) {
			http.Error(w, fmt.Sprintf("the client certificate of %q is not accepted: not one of --webhook-client-names", cn), http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// refused logs a review without a certificate, at most once a minute.
func (a *callerAuth) refused(r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if time.Since(a.logged) < time.Minute {
		return
	}
	a.logged = time.Now()
	a.log.Info("refused an admission review without a client certificate: if the API server sent it, its admission configuration "+
		"gives it no webhook client certificate, and every call fails (see the security model, \"Who may call\")", "from", r.RemoteAddr)
}
