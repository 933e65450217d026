package webhook

import (
	"bytes"
	"crypto/tls"
	"errors"
	"sync"
	"time"
)

// keyPair is one serving certificate and the CA that signed it.
type keyPair struct {
	cert    tls.Certificate
	caPEM   []byte
	made    time.Time
	expires time.Time
}

// servingKeys are a replica's serving certificate and the CAs the API server
// must trust for it, renewed before they expire. A renewal, at two thirds of
// the lifetime, makes a new CA and certificate and goes in three steps, so
// that the API server trusts whatever is served at every moment:
//
//  1. the new CA joins the caBundle, next to the one of the certificate
//     still served;
//  2. once that bundle is published (in the registration, or nowhere when
//     another replica is registered) and the overlap has passed, for every
//     API server's view of the configurations to catch up, the new
//     certificate is served; if publishing keeps failing, it is served
//     anyway an overlap before the old one expires;
//  3. the old CA then leaves the bundle, at the next publication.
//
// GetCertificate is called by the TLS server's goroutines, the other methods
// by the registrar's: all lock.
type servingKeys struct {
	names    []string
	lifetime time.Duration

	mu      sync.Mutex
	current *keyPair
	next    *keyPair
	// published is when a bundle with next's CA was published; zero
	// before.
	published time.Time
}

func newServingKeys(names []string, lifetime time.Duration, now time.Time) (*servingKeys, error) {
	k := &servingKeys{names: names, lifetime: lifetime}
	var err error
	k.current, err = k.make(now)
	return k, err
}

func (k *servingKeys) make(now time.Time) (*keyPair, error) {
	cert, caPEM, err := servingCert(k.names, now, k.lifetime)
	if err != nil {
		return nil, err
	}
	return &keyPair{cert: cert, caPEM: caPEM, made: now, expires: now.Add(k.lifetime)}, nil
}

// GetCertificate serves the current certificate (tls.Config.GetCertificate).
func (k *servingKeys) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.current == nil {
		// In-cluster, before the first certificate is read from its Secret.
		return nil, errors.New("no serving certificate yet")
	}
	return &k.current.cert, nil
}

// bundle is the caBundle to publish: the current CA, and the next one
// during a renewal.
func (k *servingKeys) bundle() []byte {
	k.mu.Lock()
	defer k.mu.Unlock()
	b := bytes.Clone(k.current.caPEM)
	if k.next != nil {
		b = append(b, k.next.caPEM...)
	}
	return b
}

// overlap is how long a published bundle with the next CA is left to reach
// the API servers before the next certificate is served: their webhook
// configurations come from a watch, which is quick but not instant.
func (k *servingKeys) overlap() time.Duration {
	return min(k.lifetime/10, 30*time.Second)
}

func (k *servingKeys) renewAt() time.Time { return k.current.made.Add(k.lifetime * 2 / 3) }

// advance renews or switches as due at now. It tells what it did, for the
// log: "" if nothing.
func (k *servingKeys) advance(now time.Time) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.next != nil {
		ready := !k.published.IsZero() && !now.Before(k.published.Add(k.overlap()))
		if ready || !now.Before(k.current.expires.Add(-k.overlap())) {
			k.current, k.next, k.published = k.next, nil, time.Time{}
			return "serving the renewed certificate", nil
		}
		return "", nil
	}
	if now.Before(k.renewAt()) {
		return "", nil
	}
	next, err := k.make(now)
	if err != nil {
		return "", err
	}
	k.next = next
	return "renewed the serving certificate; publishing its CA before serving it", nil
}

// markPublished records that bundle is in effect wherever it must be: in
// the registration, or nowhere when another replica holds it.
func (k *servingKeys) markPublished(bundle []byte, now time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.next != nil && k.published.IsZero() && bytes.Contains(bundle, k.next.caPEM) {
		k.published = now
	}
}

// nextEvent is when advance has something to do next.
func (k *servingKeys) nextEvent() time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.next == nil {
		return k.renewAt()
	}
	deadline := k.current.expires.Add(-k.overlap())
	if !k.published.IsZero() {
		if ready := k.published.Add(k.overlap()); ready.Before(deadline) {
			return ready
		}
	}
	return deadline
}
