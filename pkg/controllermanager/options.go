// Package controllermanager runs the consumer- and provider-side controllers
// of one cluster in one process: identity bootstrap, tenants and identities,
// resource slices and quotas, virtual nodes and foreign clusters.
package controllermanager

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager/auth"
	"github.com/liqo-go/liqo/pkg/controllermanager/fabric"
	"github.com/liqo-go/liqo/pkg/controllermanager/gateway"
	"github.com/liqo-go/liqo/pkg/controllermanager/ipam"
	"github.com/liqo-go/liqo/pkg/controllermanager/offloading"
	"github.com/liqo-go/liqo/pkg/controllermanager/shadowpod"
	"github.com/liqo-go/liqo/pkg/controllermanager/teardown"
	"github.com/liqo-go/liqo/pkg/kit"
	"github.com/liqo-go/liqo/pkg/storage"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/kubeletapi"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/reflection"
	"github.com/liqo-go/liqo/pkg/webhook"
	"github.com/liqo-go/liqo/pkg/webhook/budget"
	"github.com/liqo-go/liqo/pkg/webhook/podpolicy"
	"github.com/liqo-go/liqo/pkg/webhook/reflected"
)

// SlicePolicy says what a provider does with a ResourceSlice asking for more
// than it can share.
type SlicePolicy string

const (
	// SliceClamp accepts the slice with each resource cut to what is left.
	SliceClamp SlicePolicy = "Clamp"
	// SliceDeny denies the slice, with the reason in its status.
	SliceDeny SlicePolicy = "Deny"
)

// Options configure the controller manager.
type Options struct {
	// ClusterID names this cluster to its peers; required.
	ClusterID string
	// ClusterLabels become labels of the virtual nodes standing for this
	// cluster in its consumers.
	ClusterLabels map[string]string
	// Namespace holds the components' own objects.
	Namespace string
	// APIServerURL is how peers reach this cluster's API server; defaults to
	// the host of the kubeconfig the manager runs with.
	APIServerURL string
	// SharingPercentage is the share of the physical nodes' allocatable
	// resources offered to all consumers together.
	SharingPercentage int
	// SlicePolicy applies to slices asking for more than is left.
	SlicePolicy SlicePolicy
	// QuotaEnforcement is written into the Quotas created for consumers.
	QuotaEnforcement offv1beta1.LimitsEnforcement
	// HealthCheckInterval is how often a virtual node checks its provider.
	HealthCheckInterval time.Duration
	// ProviderUnreachableGrace is how long a virtual node stays Ready, and
	// its pods stay, while its provider is unreachable.
	ProviderUnreachableGrace time.Duration
	// RemoteUnschedulableTimeout is how long an offloaded pod may stay
	// unschedulable on its provider before it fails here, so that its
	// controller creates it again elsewhere (0: never).
	RemoteUnschedulableTimeout time.Duration
	// NonceLifetime is how long a provider offers a nonce no consumer used
	// before it rotates it (a used one rotates at once).
	NonceLifetime time.Duration
	// ConsumerCertLifetime is how long the client certificates this
	// cluster, as a provider, has issued to its consumers live; they are
	// renewed at two thirds of it.
	ConsumerCertLifetime time.Duration
	// MetricsAddr and HealthAddr are the listen addresses of the metrics and
	// health endpoints; "0" disables them.
	MetricsAddr string
	HealthAddr  string
	// PprofAddr is the listen address of Go's /debug/pprof endpoints
	// (profiles of the manager's CPU time and allocations); "0" disables
	// them, as by default: they are for measuring, not for production.
	PprofAddr string
	// WebhookAddr is the host:port the admission webhook server listens on
	// (port 0: a free port); WebhookAdvertiseHost is where the API server
	// calls it, WebhookAddr's host if empty.
	WebhookAddr          string
	WebhookAdvertiseHost string
	// Webhook says who may call the webhook server, how long its
	// certificates live and how often its registration is checked.
	Webhook webhook.ServingOptions
	// WebhookService is the Service in front of the webhook server when
	// the manager runs in the cluster, installed by the chart with the
	// webhook configurations; nil as a local process, which registers
	// itself by URL.
	WebhookService *webhook.ServiceRef
	// SelfProvision makes the manager create at start what the chart
	// installs in the cluster: its namespace, the peering ClusterRoles and
	// (without WebhookService) its webhook configurations. The CRDs are
	// applied before Run (RunLocal, the binary's --self-provision), with
	// rights the manager itself never needs. For the
	// playground and tests, which run it as a local process on a bare
	// cluster; RunLocal sets it.
	SelfProvision bool
	// InstallOwner names the ClusterRole of the Helm release (the chart's
	// own for the manager) that owns what the manager makes for the
	// install, so that helm uninstall removes it too; "" for none.
	InstallOwner string
	// owner is InstallOwner's reference, read at start.
	owner kit.InstallOwner
	// KubeletAPIAddr is the host and first port the virtual nodes' kubelet
	// API (logs, exec, port-forward, usage) listens on, a port per node
	// (port 0: any free port);
	// KubeletAPIAdvertiseIP is the IP the nodes publish, the host of
	// KubeletAPIAddr if empty; KubeletAPICertificate says where its serving
	// certificate comes from.
	KubeletAPIAddr        string
	KubeletAPIAdvertiseIP string
	KubeletAPICertificate kubeletapi.CertificateMode
	// Reflection tunes the reflection of each kind besides pods.
	Reflection map[string]reflection.KindOptions
	// Gateway configures the network fabric's gateways.
	Gateway gateway.Options
	// OffloadedPodNodeSelector restricts, on this cluster as a provider,
	// the nodes its consumers' pods run on.
	OffloadedPodNodeSelector map[string]string
	// MaxGracePeriod caps, on this cluster as a provider, how long its
	// consumers' pods may take to stop.
	MaxGracePeriod time.Duration
	// Teardown bounds, on this cluster as a provider, how long a consumer's
	// objects it deletes (drain, unpeer) may take to go.
	Teardown teardown.Options
	// Fabric configures the network fabric's node agent, run on the real
	// nodes once the pod CIDR is known.
	Fabric fabric.Options
	// IPAM holds this cluster's networks, for the network fabric's address
	// management; its Namespace is set from Namespace.
	IPAM ipam.Options
	// PodPolicy is what consumers' pods may ask of this cluster as a
	// provider.
	PodPolicy podpolicy.PodPolicy
	// ReflectedPolicy is what consumers' reflected Services, Ingresses
	// and Secrets may ask of this cluster as a provider.
	ReflectedPolicy reflected.ReflectedPolicy
	// TenantObjects bounds what each consumer keeps on this cluster, as a
	// provider, of the objects it writes in bulk.
	TenantObjects budget.ObjectBudget
	// Twins bound the twin namespaces consumers get on this cluster.
	Twins offloading.TwinOptions
	// Storage is the virtual StorageClass's provisioner.
	Storage storage.Options
	// Logger receives the controllers' logs.
	Logger logr.Logger
}

// DefaultGatewayImage is the gateway's image without a tag; the command
// tags it with its own version.
const DefaultGatewayImage = "ghcr.io/liqo-go/liqo-gateway"

// DefaultFabricImage is the node agent's image without a tag.
const DefaultFabricImage = "ghcr.io/liqo-go/liqo-fabric"

// defaultServiceCIDR is kubeadm's and the testbed's service CIDR.
var defaultServiceCIDR = netip.MustParsePrefix("10.96.0.0/12")

// DefaultProviderUnreachableGrace keeps a virtual node Ready through a
// provider outage of up to five minutes: with the pods' default not-ready
// toleration, they are evicted only after ten.
const DefaultProviderUnreachableGrace = 5 * time.Minute

// DefaultOptions returns the defaults the flags start from.
func DefaultOptions() Options {
	return Options{
		Namespace:                  consts.DefaultNamespace,
		SharingPercentage:          50,
		SlicePolicy:                SliceClamp,
		QuotaEnforcement:           offv1beta1.HardLimitsEnforcement,
		HealthCheckInterval:        5 * time.Second,
		ProviderUnreachableGrace:   DefaultProviderUnreachableGrace,
		RemoteUnschedulableTimeout: forge.DefaultUnschedulableTimeout,
		NonceLifetime:              auth.DefaultNonceLifetime,
		ConsumerCertLifetime:       auth.DefaultCertLifetime,
		MetricsAddr:                "0",
		HealthAddr:                 "0",
		PprofAddr:                  "0",
		WebhookAddr:                "127.0.0.1:0",
		Webhook:                    webhook.DefaultServingOptions(),
		// In a pod: --kubelet-api-address=0.0.0.0:10250 and the pod IP as
		// --kubelet-api-advertise-ip.
		KubeletAPIAddr:        kubeletapi.DefaultListenAddress,
		KubeletAPICertificate: kubeletapi.CertificateKubeletServing,
		Reflection:            reflection.DefaultKinds(),
		Gateway:               gateway.Options{Image: DefaultGatewayImage + ":latest"},
		Fabric:                fabric.Options{Image: DefaultFabricImage + ":latest"},
		IPAM:                  ipam.Options{ServiceCIDR: defaultServiceCIDR, ExternalCIDR: ipam.DefaultExternalCIDR},
		Twins:                 offloading.DefaultTwinOptions(),
		TenantObjects:         budget.DefaultObjectBudget(),
		MaxGracePeriod:        shadowpod.DefaultMaxGracePeriod,
		Teardown:              teardown.Options{Timeout: teardown.DefaultTimeout},
		Storage:               storage.DefaultOptions(),
	}
}

// AddFlags binds the options to command-line flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ClusterID, "cluster-id", o.ClusterID, "name of this cluster, as its peers see it (a DNS label)")
	fs.Var(newLabelsValue(&o.ClusterLabels), "cluster-labels", "labels of this cluster given to the virtual nodes that stand for it, as k=v,k=v")
	fs.StringVar(&o.Namespace, "namespace", o.Namespace, "namespace of the components' own objects")
	fs.StringVar(&o.APIServerURL, "api-server-url", o.APIServerURL, "URL at which peers reach this cluster's API server (default: the kubeconfig's server)")
	fs.IntVar(&o.SharingPercentage, "sharing-percentage", o.SharingPercentage, "percentage of the physical nodes' allocatable resources shared with consumers")
	fs.StringVar((*string)(&o.SlicePolicy), "resource-slice-policy", string(o.SlicePolicy), "what to do with a ResourceSlice asking for more than is left: Clamp (accept what is left) or Deny")
	fs.StringVar((*string)(&o.QuotaEnforcement), "quota-enforcement", string(o.QuotaEnforcement), "limits enforcement of consumer quotas: Hard, Soft or None")
	fs.DurationVar(&o.HealthCheckInterval, "health-check-interval", o.HealthCheckInterval, "how often virtual nodes check their provider's API server")
	fs.DurationVar(&o.ProviderUnreachableGrace, "provider-unreachable-grace", o.ProviderUnreachableGrace,
		"how long a virtual node stays Ready (taking no new pod) while its provider is unreachable, so that a short partition does not evict and recreate its pods; they are evicted after the grace and their not-ready toleration (300s by default); 0 turns the node NotReady at once")
	fs.DurationVar(&o.RemoteUnschedulableTimeout, "remote-unschedulable-timeout", o.RemoteUnschedulableTimeout,
		"how long an offloaded pod may stay unschedulable on its provider (no node there has room for it, e.g. after a drain) before it fails here, so that its controller creates it again and the placement picks a cluster that can run it; 0 never fails it")
	fs.DurationVar(&o.ConsumerCertLifetime, "consumer-certificate-lifetime", o.ConsumerCertLifetime,
		"lifetime of the client certificates issued to consumers; they are renewed at two thirds of it and the consumers pick the new one up (at least 10m)")
	fs.DurationVar(&o.NonceLifetime, "nonce-lifetime", o.NonceLifetime, "how long the nonce a consumer signs to peer is offered before it is replaced (a used one is replaced at once; the one before stays valid for ten minutes)")
	fs.StringVar(&o.MetricsAddr, "metrics-address", o.MetricsAddr, "listen address of the Prometheus metrics endpoint, served over HTTPS to callers allowed to get /metrics (0 disables it)")
	fs.StringVar(&o.HealthAddr, "health-address", o.HealthAddr, "listen address of the healthz/readyz endpoints (0 disables them)")
	fs.StringVar(&o.PprofAddr, "pprof-address", o.PprofAddr, "listen address of Go's /debug/pprof profiling endpoints, for measuring (0, the default, disables them)")
	fs.StringVar(&o.WebhookAddr, "webhook-address", o.WebhookAddr, "host:port of the admission webhook server (port 0 picks a free port); it registers itself with the API server at start")
	fs.StringVar(&o.WebhookAdvertiseHost, "webhook-advertise-host", o.WebhookAdvertiseHost, "IP or DNS name at which the API server reaches the webhook server (default: the host of --webhook-address)")
	o.Webhook.AddFlags(fs)
	fs.Var(&serviceRefValue{&o.WebhookService}, "webhook-service", "NAMESPACE/NAME of the Service in front of the webhook server in the cluster: the chart's webhook configurations call it, "+
		"and the serving certificate, shared by the replicas, lives in the Secret NAME-certs (unset: the server registers itself by URL, for a local process)")
	fs.BoolVar(&o.SelfProvision, "self-provision", o.SelfProvision, "create at start what the Helm chart installs in a cluster (the CRDs, the namespace, the peering ClusterRoles, the webhook configurations): "+
		"for a manager run as a local process on a bare cluster")
	fs.StringVar(&o.InstallOwner, "install-owner", o.InstallOwner, "ClusterRole of the Helm release that owns what the manager makes for the install as a whole (the fabric agent, the webhook's keys, the local CIDRs' Networks), so that helm uninstall removes them too (empty: nothing is owned)")
	fs.StringVar(&o.KubeletAPIAddr, "kubelet-api-address", o.KubeletAPIAddr, "host and first port of the virtual nodes' kubelet API, which serves kubectl logs, exec, port-forward and top on offloaded pods: each virtual node takes the first free port from it up (port 0: any free port)")
	fs.StringVar(&o.KubeletAPIAdvertiseIP, "kubelet-api-advertise-ip", o.KubeletAPIAdvertiseIP, "IP the virtual nodes publish, at which the API server reaches their kubelet API (default: the host of --kubelet-api-address)")
	o.addReflectionFlags(fs)
	o.PodPolicy.AddFlags(fs)
	o.ReflectedPolicy.AddFlags(fs)
	o.TenantObjects.AddFlags(fs)
	o.Twins.AddFlags(fs)
	o.Storage.AddFlags(fs)
	fs.StringVar(&o.Gateway.Image, "gateway-image", o.Gateway.Image, "image of the network fabric's gateway pods")
	fs.Var(newLabelsValue(&o.OffloadedPodNodeSelector), "offloaded-pod-node-selector", "labels of the nodes consumers' pods may run on, as k=v,k=v (default: any node)")
	fs.DurationVar(&o.MaxGracePeriod, "max-grace-period", o.MaxGracePeriod,
		"longest grace period consumers' pods run with on this provider: a longer terminationGracePeriodSeconds, a probe's, or a preStop sleep is lowered to it (a deleted pod counts against its consumer's quota until it is gone)")
	o.Teardown.AddFlags(fs)
	fs.Int32Var(&o.Gateway.Replicas, "gateway-replicas", o.Gateway.Replicas, "replicas of each network gateway: one carries the tunnel, the others stand by and take over within seconds when it goes (0 or 1: one replica, scalable by hand)")
	fs.Var(newLabelsValue(&o.Gateway.NodeSelector), "gateway-node-selector", "labels of the nodes the gateway pods may run on, as k=v,k=v (default: any node but virtual ones)")
	fs.StringVar((*string)(&o.Gateway.PullPolicy), "gateway-image-pull-policy", string(o.Gateway.PullPolicy), "pull policy of the gateway pods' image: Always, IfNotPresent or Never (default: the cluster's)")
	o.IPAM.AddFlags(fs)
	fs.StringVar(&o.Fabric.Image, "fabric-image", o.Fabric.Image, "image of the network fabric's node agent (a DaemonSet on the real nodes, run once --pod-cidr is given)")
	fs.StringVar((*string)(&o.Fabric.PullPolicy), "fabric-image-pull-policy", string(o.Fabric.PullPolicy), "pull policy of the node agent's image: Always, IfNotPresent or Never (default: the cluster's)")
	fs.StringVar((*string)(&o.KubeletAPICertificate), "kubelet-api-certificate", string(o.KubeletAPICertificate), "serving certificate of the kubelet API: kubelet-serving (issued by the cluster's kubelet-serving signer) or self-signed (for API servers that do not verify kubelet certificates)")
}

// Validate reports the first bad option in words a user can act on.
func (o *Options) Validate() error {
	if o.ClusterID == "" {
		return fmt.Errorf("--cluster-id is required")
	}
	if err := consts.ValidateClusterID(o.ClusterID); err != nil {
		return fmt.Errorf("--cluster-id: %w", err)
	}
	if o.SharingPercentage < 0 || o.SharingPercentage > 100 {
		return fmt.Errorf("--sharing-percentage must be between 0 and 100, got %d", o.SharingPercentage)
	}
	switch o.SlicePolicy {
	case SliceClamp, SliceDeny:
	default:
		return fmt.Errorf("--resource-slice-policy must be Clamp or Deny, got %q", o.SlicePolicy)
	}
	switch o.QuotaEnforcement {
	case offv1beta1.HardLimitsEnforcement, offv1beta1.SoftLimitsEnforcement, offv1beta1.NoLimitsEnforcement:
	default:
		return fmt.Errorf("--quota-enforcement must be Hard, Soft or None, got %q", o.QuotaEnforcement)
	}
	if o.HealthCheckInterval <= 0 {
		return fmt.Errorf("--health-check-interval must be positive")
	}
	if o.ProviderUnreachableGrace < 0 {
		return fmt.Errorf("--provider-unreachable-grace must not be negative, got %s", o.ProviderUnreachableGrace)
	}
	if o.RemoteUnschedulableTimeout < 0 {
		return fmt.Errorf("--remote-unschedulable-timeout must not be negative, got %s", o.RemoteUnschedulableTimeout)
	}
	if o.ConsumerCertLifetime < auth.MinCertLifetime {
		return fmt.Errorf("--consumer-certificate-lifetime must be at least %s (the certificates API's minimum), got %s", auth.MinCertLifetime, o.ConsumerCertLifetime)
	}
	if o.NonceLifetime != 0 && o.NonceLifetime < time.Minute {
		return fmt.Errorf("--nonce-lifetime must be at least 1m, to leave a peering the time to sign the nonce, got %s", o.NonceLifetime)
	}
	if o.WebhookService == nil && !o.SelfProvision {
		return fmt.Errorf("--webhook-service is required in the cluster (the Helm chart sets it); a manager run as a local process on a bare cluster needs --self-provision")
	}
	if _, _, _, err := o.webhookOptions().Endpoint(); err != nil {
		return fmt.Errorf("--webhook-address/--webhook-advertise-host: %w", err)
	}
	if err := o.Webhook.Validate(); err != nil {
		return err
	}
	if err := o.kubeletAPIConfig().Validate(); err != nil {
		return fmt.Errorf("--kubelet-api-address/--kubelet-api-advertise-ip/--kubelet-api-certificate: %w", err)
	}
	if err := o.Gateway.Validate(); err != nil {
		return fmt.Errorf("--gateway-image/--gateway-image-pull-policy: %w", err)
	}
	if err := o.Fabric.Validate(); err != nil {
		return fmt.Errorf("--fabric-image/--fabric-image-pull-policy: %w", err)
	}
	if err := o.IPAM.Validate(); err != nil {
		return err
	}
	if err := o.PodPolicy.Validate(); err != nil {
		return err
	}
	if err := o.ReflectedPolicy.Validate(); err != nil {
		return err
	}
	if err := o.Storage.Validate(); err != nil {
		return err
	}
	if err := o.TenantObjects.Validate(); err != nil {
		return err
	}
	if err := o.Twins.Validate(); err != nil {
		return err
	}
	if o.MaxGracePeriod < time.Second {
		return fmt.Errorf("--max-grace-period must be at least 1s, got %s", o.MaxGracePeriod)
	}
	if err := o.Teardown.Validate(); err != nil {
		return err
	}
	return o.validateReflection()
}

// FormatLabels renders labels as sorted k=v,k=v.
func FormatLabels(l map[string]string) string {
	parts := make([]string, 0, len(l))
	for k, v := range l {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// ParseLabels parses k=v,k=v; an empty string is no labels.
func ParseLabels(s string) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("label %q is not of the form key=value", kv)
		}
		out[k] = v
	}
	return out, nil
}

type labelsValue struct{ m *map[string]string }

func newLabelsValue(m *map[string]string) *labelsValue { return &labelsValue{m} }
func (l *labelsValue) String() string {
	if l.m == nil {
		return ""
	}
	return FormatLabels(*l.m)
}
func (l *labelsValue) Set(s string) error {
	m, err := ParseLabels(s)
	if err != nil {
		return err
	}
	*l.m = m
	return nil
}
func (l *labelsValue) Type() string { return "labels" }

// serviceRefValue is a NAMESPACE/NAME flag.
type serviceRefValue struct{ ref **webhook.ServiceRef }

func (v *serviceRefValue) String() string {
	if *v.ref == nil {
		return ""
	}
	return (*v.ref).String()
}

func (v *serviceRefValue) Set(s string) error {
	r, err := webhook.ParseServiceRef(s)
	if err != nil {
		return err
	}
	*v.ref = r
	return nil
}

func (v *serviceRefValue) Type() string { return "namespace/name" }

func (o *Options) webhookOptions() webhook.Options {
	reflected, pods := o.ReflectedPolicy, o.PodPolicy
	if o.Storage.Enabled {
		reflected.VirtualStorageClass = o.Storage.VirtualClass
		pods.VirtualStorageClass = o.Storage.VirtualClass
	}
	return webhook.Options{Addr: o.WebhookAddr, AdvertiseHost: o.WebhookAdvertiseHost, Pods: pods, Reflected: reflected,
		Objects: o.TenantObjects, Serving: o.Webhook, Service: o.WebhookService, Owner: o.owner}
}

// kubeletAPIConfig is the kubelet API's configuration but for its client,
// resolver and logger.
func (o *Options) kubeletAPIConfig() kubeletapi.Config {
	return kubeletapi.Config{ListenAddress: o.KubeletAPIAddr, AdvertiseIP: o.KubeletAPIAdvertiseIP, Certificate: o.KubeletAPICertificate}
}
