package webhook

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"testing"
	"time"
)

// TestServingCert checks that a TLS client trusting only the caBundle
// accepts the serving certificate for the advertised host, as the API
// server must.
func TestServingCert(t *testing.T) {
	for _, host := range []string{"127.0.0.1", "::1", "webhook.liqo.example"} {
		cert, caPEM, err := servingCert([]string{host}, time.Now(), time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caPEM) {
			t.Fatalf("%s: the caBundle is no PEM certificate", host)
		}
		serverConn, clientConn := net.Pipe()
		server := tls.Server(serverConn, &tls.Config{Certificates: []tls.Certificate{cert}})
		go func() {
			_ = server.Handshake()
			// Not server.Close: its close_notify would wait on a reader.
			_ = serverConn.Close()
		}()
		client := tls.Client(clientConn, &tls.Config{RootCAs: pool, ServerName: host})
		if err := client.Handshake(); err != nil {
			t.Errorf("%s: handshake trusting the caBundle: %v", host, err)
		}
		_ = clientConn.Close()

		// Another start makes another CA: the old bundle must not trust it.
		other, _, err := servingCert([]string{host}, time.Now(), time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := x509.ParseCertificate(other.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: pool}); err == nil {
			t.Errorf("%s: a certificate of another start verifies against this start's caBundle", host)
		}
	}
}
