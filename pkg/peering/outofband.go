package peering

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// An out-of-band peering is asked for by liqoctl peer out-of-band, which
// records what the provider's administrator handed over in the consumer
// (the request Secret, OutOfBandRequest) and waits; the consumer's
// controller manager performs it (pkg/controllermanager/outofband) and
// reports on the ForeignCluster of the provider, in the condition
// OutOfBandCondition, for the request its annotation OutOfBandRequestIDKey
// names.
const (
	// OutOfBandRequestSecret, in the consumer's tenant namespace of the
	// provider, is the request: the provider's API server URL, cluster ID
	// and token, and the peering's options.
	OutOfBandRequestSecret = "liqo-out-of-band-peering"
	// OutOfBandRequestLabel (value "true") marks it.
	OutOfBandRequestLabel = "liqo.io/out-of-band-request"
	// OutOfBandKubeconfigSecret, in the same namespace, keeps the peering
	// user's kubeconfig once the manager verified the provider, so that
	// liqoctl unpeer out-of-band can clean the provider up.
	OutOfBandKubeconfigSecret = "liqo-out-of-band-kubeconfig"
	// OutOfBandLabel (value "true") marks it.
	OutOfBandLabel = "liqo.io/out-of-band"
	// OutOfBandRequestIDKey is the annotation naming a request: on the
	// request Secret, each run of liqoctl gives a new one; on the
	// ForeignCluster, the manager names the request its condition is about.
	OutOfBandRequestIDKey = "liqo.io/out-of-band-request-id"

	// OutOfBandCondition is the ForeignCluster condition of the manager's
	// progress.
	OutOfBandCondition = corev1beta1.OutOfBandPeeringStatusCondition
)

// The request Secret's keys.
const (
	oobAuthURL             = "auth-url"
	oobClusterID           = "cluster-id"
	oobAuthToken           = "auth-token"
	oobProxyURL            = "proxy-url"
	oobResources           = "resources"
	oobCreateResourceSlice = "create-resource-slice"
	oobCreateVirtualNode   = "create-virtual-node"
	oobNetwork             = "network"
)

// The reasons of OutOfBandCondition. Pending: the step in progress.
// Established: done. Error: given up until the request changes (run the
// command again, with a new token if need be). NotReady: a step failed
// and is retried.
const (
	ReasonVerifyingServer     = "VerifyingServer"
	ReasonClaiming            = "ClaimingPeeringUser"
	ReasonAuthenticating      = "Authenticating"
	ReasonConnectingNetwork   = "ConnectingNetwork"
	ReasonRequestingResources = "RequestingResources"
	ReasonPeered              = "Peered"
	ReasonAuthenticated       = "Authenticated"

	ReasonInvalidRequest      = "InvalidRequest"
	ReasonUntrustedServer     = "UntrustedServer"
	ReasonWrongCluster        = "WrongCluster"
	ReasonNotAPeeringUser     = "NotAPeeringUser"
	ReasonClaimedElsewhere    = "ClaimedByAnotherCluster"
	ReasonTenantRejected      = "TenantRejected"
	ReasonResourcesDenied     = "ResourcesDenied"
	ReasonProviderUnreachable = "ProviderUnreachable"
	ReasonStepFailed          = "StepFailed"
)

// OutOfBandRequest is what liqoctl peer out-of-band records for the
// manager.
type OutOfBandRequest struct {
	// ID names this request (a new one each run).
	ID string
	// AuthURL is the provider's API server URL, ClusterID its cluster ID.
	AuthURL, ClusterID string
	// Token is the token's text form (peeringuser.ParseToken).
	Token string
	// ProxyURL, if set, is the proxy the consumer reaches the provider
	// through.
	ProxyURL string
	// CreateResourceSlice asks the provider for Resources once
	// authenticated; CreateVirtualNode has the slice make its virtual node.
	CreateResourceSlice, CreateVirtualNode bool
	Resources                              corev1.ResourceList
	// Network, if set, has the manager set up the network fabric with the
	// provider once authenticated; nil peers without (networking
	// disabled).
	Network *FabricOptions
}

// FabricOptions are the choices the network fabric is made with:
// liqoctl's network connect flags. netsetup.Settings holds them, and an
// out-of-band request records them for the manager.
type FabricOptions struct {
	// ServerServiceType exposes the gateway server; ServiceTypeChosen
	// tells that the user chose it (a LoadBalancer left by default falls
	// back to a NodePort where it gets no address).
	ServerServiceType  string `json:"serverServiceType,omitempty"`
	ServiceTypeChosen  bool   `json:"serviceTypeChosen,omitempty"`
	ServerPort         int32  `json:"serverPort,omitempty"`
	ServerNodePort     int32  `json:"serverNodePort,omitempty"`
	ServerLoadBalancer string `json:"serverLoadBalancer,omitempty"`
	// ClientAddress and ClientPort override what the client dials.
	ClientAddress      string `json:"clientAddress,omitempty"`
	ClientPort         int32  `json:"clientPort,omitempty"`
	MTU                int32  `json:"mtu,omitempty"`
	DisableSharingKeys bool   `json:"disableSharingKeys,omitempty"`
}

// Validate checks the fields the gateways are made from. Pure.
func (n FabricOptions) Validate() error {
	switch corev1.ServiceType(n.ServerServiceType) {
	case corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort, corev1.ServiceTypeClusterIP:
	default:
		return fmt.Errorf("network: server Service type %q is not LoadBalancer, NodePort or ClusterIP", n.ServerServiceType)
	}
	for what, p := range map[string]int32{"server port": n.ServerPort, "server node port": n.ServerNodePort, "client port": n.ClientPort} {
		if p < 0 || p > 65535 {
			return fmt.Errorf("network: %s %d is not a port", what, p)
		}
	}
	if n.MTU < 0 || n.MTU > 65535 {
		return fmt.Errorf("network: MTU %d out of range", n.MTU)
	}
	return nil
}

// Validate checks the request's fields. Pure.
func (r OutOfBandRequest) Validate() error {
	if r.ID == "" {
		return errors.New("no request ID")
	}
	if err := consts.ValidateClusterID(r.ClusterID); err != nil {
		return fmt.Errorf("cluster ID: %w", err)
	}
	if u, err := url.Parse(r.AuthURL); err != nil || u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("auth URL %q is not an https:// URL", r.AuthURL)
	}
	if r.Token == "" {
		return errors.New("no auth token")
	}
	if r.ProxyURL != "" {
		if err := authv1beta1.ValidateProxyURL(r.ProxyURL); err != nil {
			return err
		}
	}
	for name, q := range r.Resources {
		if q.Sign() < 0 {
			return fmt.Errorf("resource %s: %s is negative", name, q.String())
		}
	}
	if r.Network != nil {
		return r.Network.Validate()
	}
	return nil
}

// Secret is the request Secret, in the consumer's tenant namespace of the
// provider. Pure.
func (r OutOfBandRequest) Secret() (*corev1.Secret, error) {
	res, err := json.Marshal(r.Resources)
	if err != nil {
		return nil, err
	}
	var network []byte
	if r.Network != nil {
		if network, err = json.Marshal(r.Network); err != nil {
			return nil, err
		}
	}
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: OutOfBandRequestSecret, Namespace: consts.TenantNamespace(r.ClusterID),
			// managed-by: the manager's cache keeps (the metadata of) its
			// own Secrets only.
			Labels: map[string]string{OutOfBandRequestLabel: "true", consts.RemoteClusterIDLabel: r.ClusterID,
				consts.ManagedByLabel: consts.ManagedByValue},
			Annotations: map[string]string{OutOfBandRequestIDKey: r.ID}},
		Data: map[string][]byte{
			oobAuthURL: []byte(r.AuthURL), oobClusterID: []byte(r.ClusterID), oobAuthToken: []byte(r.Token),
			oobProxyURL: []byte(r.ProxyURL), oobResources: res,
			oobCreateResourceSlice: []byte(strconv.FormatBool(r.CreateResourceSlice)),
			oobCreateVirtualNode:   []byte(strconv.FormatBool(r.CreateVirtualNode)),
			oobNetwork:             network,
		},
	}, nil
}

// ParseOutOfBandRequest reads a request Secret, and refuses one whose
// fields are invalid or whose namespace is not the tenant namespace of
// the cluster it names. Pure.
func ParseOutOfBandRequest(s *corev1.Secret) (OutOfBandRequest, error) {
	d := s.Data
	r := OutOfBandRequest{ID: s.Annotations[OutOfBandRequestIDKey], AuthURL: string(d[oobAuthURL]),
		ClusterID: string(d[oobClusterID]), Token: string(d[oobAuthToken]), ProxyURL: string(d[oobProxyURL])}
	var err error
	for _, b := range []struct {
		key  string
		into *bool
	}{{oobCreateResourceSlice, &r.CreateResourceSlice}, {oobCreateVirtualNode, &r.CreateVirtualNode}} {
		if *b.into, err = strconv.ParseBool(string(d[b.key])); err != nil {
			return r, fmt.Errorf("%s: %q is not a boolean", b.key, d[b.key])
		}
	}
	if len(d[oobResources]) > 0 {
		if err := json.Unmarshal(d[oobResources], &r.Resources); err != nil {
			return r, fmt.Errorf("%s: %w", oobResources, err)
		}
	}
	if len(d[oobNetwork]) > 0 {
		r.Network = &FabricOptions{}
		if err := json.Unmarshal(d[oobNetwork], r.Network); err != nil {
			return r, fmt.Errorf("%s: %w", oobNetwork, err)
		}
	}
	if err := r.Validate(); err != nil {
		return r, err
	}
	if want := consts.TenantNamespace(r.ClusterID); s.Namespace != want {
		return r, fmt.Errorf("the request for cluster %s is in namespace %s, not its tenant namespace %s", r.ClusterID, s.Namespace, want)
	}
	return r, nil
}

// OutOfBandState is the manager's condition on fc about the request id,
// nil while it has reported on none, or on an earlier one.
func OutOfBandState(fc *corev1beta1.ForeignCluster, id string) *corev1beta1.Condition {
	if fc.Annotations[OutOfBandRequestIDKey] != id {
		return nil
	}
	for i := range fc.Status.Conditions {
		if c := &fc.Status.Conditions[i]; c.Type == OutOfBandCondition {
			return c
		}
	}
	return nil
}
