package auth

import (
	"bytes"
	"crypto/x509"
	"time"
)

// DefaultCertLifetime is how long a consumer's client certificate lives.
// Kubernetes cannot revoke a certificate: a short life bounds what a
// leaked one is worth (and what an old one is worth once a consumer peers
// again under the same name). Rotation needs no one: the provider renews
// at two thirds of the lifetime, the consumer picks the new one up.
const DefaultCertLifetime = 7 * 24 * time.Hour

// MinCertLifetime is the shortest lifetime the certificates API grants.
const MinCertLifetime = 10 * time.Minute

// renewAt is when a certificate is renewed: at two thirds of its
// lifetime, leaving a third for the consumer to pick the new one up and
// for a provider that was down to catch up.
func renewAt(cert *x509.Certificate) time.Time {
	life := cert.NotAfter.Sub(cert.NotBefore)
	return cert.NotBefore.Add(life * 2 / 3)
}

// pickUpAt is when the consumer looks for the renewed certificate: a
// little after the provider renewed it.
func pickUpAt(cert *x509.Certificate) time.Time {
	life := cert.NotAfter.Sub(cert.NotBefore)
	return cert.NotBefore.Add(life * 7 / 10)
}

// certFor parses certPEM and checks that it is for the public key
// clientKey (PKIX DER).
func certFor(certPEM, clientKey []byte) (*x509.Certificate, bool) {
	cert, err := parseCert(certPEM)
	if err != nil {
		return nil, false
	}
	der, err := x509.MarshalPKIXPublicKey(cert.PublicKey)
	if err != nil || !bytes.Equal(der, clientKey) {
		return nil, false
	}
	return cert, true
}

// until is the delay from now to t, at least a second (a requeue of 0
// would mean none).
func until(now, t time.Time) time.Duration {
	return max(t.Sub(now), time.Second)
}
