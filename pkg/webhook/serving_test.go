package webhook

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/cert"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
	"github.com/liqo-go/liqo/pkg/webhook/podplacement"
)

// registeredShadowPodWebhook is the ShadowPod webhook's URL and caBundle
// as the API server has them.
func registeredShadowPodWebhook(t *testing.T) (string, []byte) {
	t.Helper()
	_, v := registered(t)
	return *v.Webhooks[0].ClientConfig.URL, v.Webhooks[0].ClientConfig.CABundle
}

// signedByCluster is a client certificate for cn signed by the cluster's
// CA through the certificates API, as any user's may be: the consumers'
// own credentials are made so.
func signedByCluster(t *testing.T, cn string) tls.Certificate {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	request, err := cert.MakeCSR(key, &pkix.Name{CommonName: cn}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs := cluster.Client().CertificatesV1().CertificateSigningRequests()
	csr, err := cs.Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "webhook-caller-"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    request,
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Test", Message: "approved by the webhook test"})
	if _, err := cs.UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var certPEM []byte
	webhooktest.Eventually(t, "the signed certificate of "+cn, func(ctx context.Context) (bool, error) {
		got, err := cs.Get(ctx, csr.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		certPEM = got.Status.Certificate
		return len(certPEM) > 0, nil
	})
	block, _ := pem.Decode(certPEM)
	return tls.Certificate{Certificate: [][]byte{block.Bytes}, PrivateKey: key}
}

// foreignClientCert is a client certificate for cn signed by a CA of its
// own, which the cluster does not know.
func foreignClientCert(t *testing.T, cn string) tls.Certificate {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ca, err := cert.NewSelfSignedCACert(cert.Config{CommonName: "forger-ca", NotBefore: now.Add(-time.Hour)}, caKey)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: cn}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// sendReview posts req straight to the webhook at target, trusting
// caBundle, presenting cert if any: what anyone reaching the port can do.
// It returns the HTTP status and body, or the error of a refused
// handshake.
func sendReview(t *testing.T, target string, caBundle []byte, req admissionv1.AdmissionRequest, cert *tls.Certificate) (int, string, error) {
	t.Helper()
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "AdmissionReview"}, Request: &req})
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caBundle)
	tlsConfig := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if cert != nil {
		// Presented whatever CAs the server names, as a hostile client
		// would: Go's own choice would send none the server does not
		// name.
		tlsConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Post(target, "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	got, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(got), err
}

// TestCallerAuthentication sends the ShadowPod webhook, straight to its
// port, a review no API server sent: a real (not dry-run) create filling
// the consumer's quota, which would hold the quota for the reservation's
// lifetime and refuse the consumer's real pods. Only the API server's
// client certificate is let through: none, a consumer's own (signed by the
// same cluster CA) and one of a foreign CA are all refused, and the real
// create that follows is admitted.
func TestCallerAuthentication(t *testing.T) {
	ctx := context.Background()
	webhooktest.Consumer(t, "caller", offv1beta1.HardLimitsEnforcement, webhooktest.List("cpu", "1", "pods", "10"))
	target, caBundle := registeredShadowPodWebhook(t)
	forged := webhooktest.ShadowPodReview(t, "caller", webhooktest.ShadowPod("forged", webhooktest.Twin("caller"), "caller", "1", ""), nil, false, nil).AdmissionRequest

	status, body, err := sendReview(t, target, caBundle, forged, nil)
	if err != nil || status != http.StatusUnauthorized || !strings.Contains(body, "client certificate") {
		t.Errorf("a review without a client certificate: status %d, body %q, error %v; want 401 asking for a client certificate", status, body, err)
	}
	ownCert := signedByCluster(t, consts.ConsumerUser("caller"))
	status, body, err = sendReview(t, target, caBundle, forged, &ownCert)
	if err != nil || status != http.StatusForbidden || !strings.Contains(body, consts.ConsumerUser("caller")) {
		t.Errorf("a review with the consumer's own certificate: status %d, body %q, error %v; want 403 naming %s",
			status, body, err, consts.ConsumerUser("caller"))
	}
	foreign := foreignClientCert(t, testbed.WebhookClientName)
	if status, body, err = sendReview(t, target, caBundle, forged, &foreign); err == nil {
		t.Errorf("a review with a certificate of a foreign CA: status %d, body %q; want the handshake refused", status, body)
	}

	// The API server's name, signed by the trusted CA, is judged (a dry
	// run, which reserves nothing).
	apiServer := signedByCluster(t, testbed.WebhookClientName)
	dryRun := webhooktest.ShadowPodReview(t, "caller", webhooktest.ShadowPod("probe", webhooktest.Twin("caller"), "caller", "1", ""), nil, true, nil).AdmissionRequest
	status, body, err = sendReview(t, target, caBundle, dryRun, &apiServer)
	if err != nil || status != http.StatusOK || !strings.Contains(body, `"allowed":true`) {
		t.Errorf("a review with the API server's name: status %d, body %q, error %v; want it judged and allowed", status, body, err)
	}

	if err := cl.Create(ctx, webhooktest.ShadowPod("real", webhooktest.Twin("caller"), "caller", "1", "")); err != nil {
		t.Errorf("the consumer's real ShadowPod after the forged reviews: %v", err)
	}
}

// waitRegistered waits until r's URL is the registered one.
func waitRegistered(t *testing.T, r *webhooktest.Manager, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		url, err := webhooktest.RegisteredURL(ctx, MutatingConfigurationName)
		return err == nil && url == r.URL, nil
	})
	if err != nil {
		url, _ := webhooktest.RegisteredURL(context.Background(), MutatingConfigurationName)
		t.Fatalf("%s is not registered after %s: %s is", r.URL, within, url)
	}
	return time.Since(start)
}

// TestRegistrationFailover runs a second replica, which registers itself
// at start; the first leaves the registration alone while the second
// answers, and once the second is gone points it back at itself, so pods
// in offloaded namespaces are created again within a bounded time.
func TestRegistrationFailover(t *testing.T) {
	ctx := context.Background()
	webhooktest.OffloadedNamespace(t, "failover", offv1beta1.NamespaceOffloadingSpec{PodOffloadingStrategy: offv1beta1.LocalPodOffloadingStrategy})
	other, err := startManager(cluster.Config, Options{Addr: "127.0.0.1:0", Serving: ServingOptions{CheckInterval: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Stop()
	// Several of running's checks: the live replica keeps its registration.
	time.Sleep(3500 * time.Millisecond)
	if url, err := webhooktest.RegisteredURL(ctx, MutatingConfigurationName); err != nil || url != other.URL {
		t.Fatalf("registered %s (%v) while %s answers: replicas must not take a live registration", url, err, other.URL)
	}

	other.Stop()
	stopped := time.Now()
	const bound = 20 * time.Second
	var created *corev1.Pod
	pctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	var last error
	for i := 0; created == nil && pctx.Err() == nil; i++ {
		pod := webhooktest.PlainPod("failover")
		pod.Name = fmt.Sprintf("app-%d", i)
		if last = cl.Create(pctx, pod); last == nil {
			created = pod
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if created == nil {
		t.Fatalf("no pod created in an offloaded namespace within %s of the registered replica's end: %v", bound, last)
	}
	t.Logf("pods created again %s after the registered replica stopped", time.Since(stopped).Round(100*time.Millisecond))
	if terms := podplacement.RequiredTerms(created); !equality.Semantic.DeepEqual(terms, []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.NotVirtual)}) {
		t.Errorf("the pod was not placed by the webhook: %+v", terms)
	}
	waitRegistered(t, running, 5*time.Second)
}

// servedLeaf dials the registered pod webhook trusting only its registered
// caBundle, as the API server does, and returns the served certificate.
func servedLeaf(ctx context.Context) (*x509.Certificate, error) {
	m, _, err := registeredConfigs(ctx)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(*m.Webhooks[0].ClientConfig.URL)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(m.Webhooks[0].ClientConfig.CABundle)
	d := tls.Dialer{Config: &tls.Config{RootCAs: pool, ServerName: u.Hostname(), MinVersion: tls.VersionTLS12}}
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	return conn.(*tls.Conn).ConnectionState().PeerCertificates[0], nil
}

// bundleCerts counts the certificates in a caBundle.
func bundleCerts(bundle []byte) int {
	n := 0
	for {
		var block *pem.Block
		if block, bundle = pem.Decode(bundle); block == nil {
			return n
		}
		n++
	}
}

// TestCertRotation runs a replica whose certificates live 15 s, past the
// end of its first: the served certificate always verifies against the
// registered caBundle and has not expired, it is renewed, the old CA
// leaves the bundle, and pods are created throughout.
func TestCertRotation(t *testing.T) {
	ctx := context.Background()
	webhooktest.OffloadedNamespace(t, "rotation", offv1beta1.NamespaceOffloadingSpec{PodOffloadingStrategy: offv1beta1.LocalPodOffloadingStrategy})
	const lifetime = 15 * time.Second
	rotating, err := startManager(cluster.Config, Options{Addr: "127.0.0.1:0", Serving: ServingOptions{CertLifetime: lifetime, CheckInterval: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		rotating.Stop()
		waitRegistered(t, running, 20*time.Second)
	}()
	first, err := servedLeaf(ctx)
	if err != nil {
		t.Fatalf("the first certificate against the registered caBundle: %v", err)
	}
	// Past the first certificate's end, short of the second's renewal.
	end := time.Now().Add(lifetime + 3*time.Second)
	served := map[string]bool{}
	for i := 0; time.Now().Before(end); i++ {
		leaf, err := servedLeaf(ctx)
		if err != nil {
			t.Errorf("%s: the served certificate against the registered caBundle: %v", time.Now().Format(time.StampMilli), err)
		} else {
			served[leaf.SerialNumber.String()] = true
			if time.Now().After(leaf.NotAfter) {
				t.Errorf("%s: served a certificate expired at %s", time.Now().Format(time.StampMilli), leaf.NotAfter.Format(time.StampMilli))
			}
		}
		pod := webhooktest.PlainPod("rotation")
		pod.Name = fmt.Sprintf("app-%d", i)
		if err := cl.Create(ctx, pod); err != nil {
			t.Errorf("%s: creating a pod: %v", time.Now().Format(time.StampMilli), err)
		}
		time.Sleep(300 * time.Millisecond)
	}
	if len(served) < 2 {
		t.Fatalf("one certificate served for %s (valid until %s): not renewed", lifetime+3*time.Second, first.NotAfter.Format(time.DateTime))
	}
	m, _, err := registeredConfigs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := bundleCerts(m.Webhooks[0].ClientConfig.CABundle); n != 1 {
		t.Errorf("the caBundle holds %d certificates after the switch, want the new CA alone", n)
	}
}
