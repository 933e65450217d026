package kubeletapi

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
)

// CertificateMode says where the serving certificate comes from.
type CertificateMode string

const (
	// CertificateKubeletServing has the cluster's kubernetes.io/kubelet-serving
	// signer issue the certificate through a CertificateSigningRequest, which
	// the Server approves itself: API servers that verify kubelet
	// certificates (--kubelet-certificate-authority) accept it.
	CertificateKubeletServing CertificateMode = "kubelet-serving"
	// CertificateSelfSigned makes a self-signed certificate: enough for API
	// servers that do not verify kubelet certificates, and needs no
	// permission on the certificates API.
	CertificateSelfSigned CertificateMode = "self-signed"
)

// Config configures a Server.
type Config struct {
	// ListenAddress is the host:port the Server listens on, a port per
	// virtual node: the first free one from port up, or any free port if
	// it is 0.
	ListenAddress string
	// AdvertiseIP is the address the virtual nodes publish and the serving
	// certificate names; empty takes the host of ListenAddress, which must
	// then be a specific IP.
	AdvertiseIP string
	// Certificate is CertificateKubeletServing if empty.
	Certificate CertificateMode
	// CommonName names the certificate's subject, as
	// system:node:<CommonName>; the signer demands that form.
	CommonName string
	// Client reaches the local API server: token and access reviews, the
	// client CA, the certificate request.
	Client kubernetes.Interface
	// Resolver finds the remote twin of the pod a request names.
	Resolver Resolver
	// Usage reads the usage of a node's pods from its provider; nil
	// serves no usage.
	Usage UsageReader
	// Logger receives request failures and certificate renewals.
	Logger logr.Logger
	// StreamIdleTimeout closes exec, attach and port-forward streams idle
	// that long; zero takes DefaultStreamIdleTimeout.
	StreamIdleTimeout time.Duration
}

// Defaults of Config.
const (
	DefaultListenAddress     = "127.0.0.1:0"
	DefaultCommonName        = "liqo-virtual-kubelet"
	DefaultStreamIdleTimeout = 4 * time.Hour // the kubelet's default
	// streamCreationTimeout bounds the set-up of a stream, as the
	// kubelet's fixed 30 s does.
	streamCreationTimeout = 30 * time.Second
)

// Validate reports the first bad setting of cfg, leaving aside Client,
// Resolver and Logger: the checks a command line's flags need.
func (cfg Config) Validate() error {
	_, err := cfg.settings()
	return err
}

// withDefaults validates cfg and fills in what is empty.
func (cfg Config) withDefaults() (Config, error) {
	cfg, err := cfg.settings()
	if err != nil {
		return cfg, err
	}
	if cfg.Client == nil || cfg.Resolver == nil {
		return cfg, errors.New("kubelet API: a local client and a resolver are required")
	}
	return cfg, nil
}

// settings validates and defaults the settings Validate checks.
func (cfg Config) settings() (Config, error) {
	if cfg.ListenAddress == "" {
		cfg.ListenAddress = DefaultListenAddress
	}
	host, port, err := net.SplitHostPort(cfg.ListenAddress)
	if err != nil {
		return cfg, fmt.Errorf("kubelet API listen address %q: %w", cfg.ListenAddress, err)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return cfg, fmt.Errorf("kubelet API listen address %q: the port is not a number from 0 to 65535", cfg.ListenAddress)
	}
	if cfg.AdvertiseIP == "" {
		ip := net.ParseIP(host)
		if ip == nil || ip.IsUnspecified() {
			return cfg, fmt.Errorf("kubelet API: listening on %q, the address to advertise to the API server must be given", cfg.ListenAddress)
		}
		cfg.AdvertiseIP = ip.String()
	}
	if ip := net.ParseIP(cfg.AdvertiseIP); ip == nil || ip.IsUnspecified() {
		return cfg, fmt.Errorf("kubelet API: advertised address %q is not a specific IP address", cfg.AdvertiseIP)
	}
	switch cfg.Certificate {
	case "":
		cfg.Certificate = CertificateKubeletServing
	case CertificateKubeletServing, CertificateSelfSigned:
	default:
		return cfg, fmt.Errorf("kubelet API: certificate mode %q is neither %s nor %s", cfg.Certificate, CertificateKubeletServing, CertificateSelfSigned)
	}
	if cfg.CommonName == "" {
		cfg.CommonName = DefaultCommonName
	}
	if cfg.StreamIdleTimeout < 0 {
		return cfg, fmt.Errorf("kubelet API: negative stream idle timeout %s", cfg.StreamIdleTimeout)
	}
	if cfg.StreamIdleTimeout == 0 {
		cfg.StreamIdleTimeout = DefaultStreamIdleTimeout
	}
	return cfg, nil
}
