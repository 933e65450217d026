package outofband

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/liqo-go/liqo/apis"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	"github.com/liqo-go/liqo/pkg/clientcfg"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/peering"
	"github.com/liqo-go/liqo/pkg/peering/netsetup"
	"github.com/liqo-go/liqo/pkg/peeringuser"
	"github.com/liqo-go/liqo/pkg/remotecluster"
)

// handshake is one attempt at a request: its phases run in order, each
// reported before it starts.
type handshake struct {
	r        *Reconciler
	req      peering.OutOfBandRequest
	progress *progress

	token  peeringuser.Token
	user   *peeringuser.Identity
	remote client.Client
}

// phase is one step of the handshake.
type phase struct {
	reason, message string
	do              func(context.Context) error
}

// run performs the phases and returns the final report.
func (h *handshake) run(ctx context.Context) (state, error) {
	id := h.req.ID
	phases := []phase{
		{peering.ReasonVerifyingServer, "checking that the API server at " + h.req.AuthURL + " presents a certificate of the CA in the token", h.verify},
		{peering.ReasonClaiming, "asking who the token is, and claiming the peering user for this cluster", h.claim},
		{peering.ReasonAuthenticating, "authenticating with the provider (nonce, Tenant, Identity)", h.authenticate},
	}
	if h.req.Network != nil {
		phases = append(phases, phase{peering.ReasonConnectingNetwork, "setting up the network fabric with the provider (Configurations, gateways, keys)", h.network})
	}
	if h.req.CreateResourceSlice {
		phases = append(phases, phase{peering.ReasonRequestingResources, "asking the provider for resources (ResourceSlice " + h.req.ClusterID + ")", h.slice})
	}
	for _, p := range phases {
		if err := h.r.report(ctx, h.req.ClusterID, id, state{corev1beta1.PendingStatus, p.reason, p.message}); err != nil {
			return state{}, err
		}
		if err := p.do(ctx); err != nil {
			return state{}, err
		}
	}
	if !h.req.CreateResourceSlice {
		return state{corev1beta1.EstablishedStatus, peering.ReasonAuthenticated,
			"authenticated with " + h.req.ClusterID + "; no ResourceSlice asked for"}, nil
	}
	return state{corev1beta1.EstablishedStatus, peering.ReasonPeered,
		"peered with " + h.req.ClusterID + ": the provider granted ResourceSlice " + h.req.ClusterID}, nil
}

// verify checks the provider's API server against the token's CA before
// anything is sent to it, and builds the client that sends the token.
func (h *handshake) verify(ctx context.Context) error {
	tok, err := peeringuser.ParseToken(h.req.Token)
	if err != nil {
		return fail(peering.ReasonInvalidRequest, true, err)
	}
	switch err := peeringuser.VerifyServerVia(ctx, h.req.AuthURL, h.req.ProxyURL, tok.CA, h.r.Reach); {
	case errors.Is(err, peeringuser.ErrUntrustedServer):
		return fail(peering.ReasonUntrustedServer, true, fmt.Errorf("refusing to send the token: %w; the token was altered, or --auth-url is not the cluster it was issued for", err))
	case err != nil:
		return fail(peering.ReasonProviderUnreachable, false, fmt.Errorf("the provider's API server at %s: %w", h.req.AuthURL, err))
	}
	h.token = tok
	h.progress.Info("the API server at %s presents a certificate of the CA in the token", h.req.AuthURL)
	return nil
}

// claim asks who the token is, checks the provider's cluster ID, claims
// the peering user and keeps its kubeconfig.
func (h *handshake) claim(ctx context.Context) error {
	cfg := clientcfg.Tuned(h.token.RESTConfig(h.req.AuthURL))
	cfg.Timeout = h.r.Reach
	if h.req.ProxyURL != "" {
		u, err := url.Parse(h.req.ProxyURL)
		if err != nil {
			return fail(peering.ReasonInvalidRequest, true, err)
		}
		cfg.Proxy = http.ProxyURL(u)
	}
	// The peering user's clients, for the handshake only: the Identity's
	// Cluster replaces them once peered.
	rc, err := remotecluster.New(h.req.ClusterID, "", cfg, remotecluster.Options{Scheme: apis.NewScheme()})
	if err != nil {
		return fail(peering.ReasonInvalidRequest, true, err)
	}
	cs := rc.Clientset
	user, err := peeringuser.WhoAmI(ctx, cs)
	switch {
	case errors.Is(err, peeringuser.ErrNotPeeringUser):
		return fail(peering.ReasonNotAPeeringUser, true, err)
	case apierrors.IsUnauthorized(err):
		return fail(peering.ReasonNotAPeeringUser, true, fmt.Errorf("the provider refuses the token (revoked, or deleted with its peering user?): %w", err))
	case err != nil:
		return fail(peering.ReasonProviderUnreachable, false, err)
	}
	cm, err := cs.CoreV1().ConfigMaps(user.Namespace).Get(ctx, consts.ClusterIDConfigMap, metav1.GetOptions{})
	if err != nil {
		return fail(peering.ReasonProviderUnreachable, false, fmt.Errorf("reading the provider's cluster ID (%s/%s): %w", user.Namespace, consts.ClusterIDConfigMap, err))
	}
	if got := cm.Data[consts.ClusterIDKey]; got != h.req.ClusterID {
		return fail(peering.ReasonWrongCluster, true, fmt.Errorf("the API server at %s is cluster %q, not %q (--cluster-id): refusing to peer", h.req.AuthURL, got, h.req.ClusterID))
	}
	remote := rc.Client
	if err := peeringuser.Claim(ctx, remote, user, h.r.ClusterID, h.progress); err != nil {
		if errors.Is(err, peeringuser.ErrClaimedElsewhere) {
			return fail(peering.ReasonClaimedElsewhere, true, err)
		}
		return fail(peering.ReasonStepFailed, false, err)
	}
	h.user, h.remote = user, remote
	return h.keepKubeconfig(ctx)
}

// keepKubeconfig stores the peering user's kubeconfig in the tenant
// namespace, before the authentication starts: a peering that fails
// halfway can be undone with liqoctl unpeer out-of-band.
func (h *handshake) keepKubeconfig(ctx context.Context) error {
	provider := h.req.ClusterID
	kc, err := h.token.Kubeconfig(h.req.AuthURL, h.req.ProxyURL, provider, h.user.Name, h.user.Namespace)
	if err != nil {
		return fail(peering.ReasonInvalidRequest, true, err)
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: peering.OutOfBandKubeconfigSecret, Namespace: consts.TenantNamespace(provider)}}
	if _, err := controllerutil.CreateOrUpdate(ctx, h.r.Client, s, func() error {
		s.Labels = map[string]string{peering.OutOfBandLabel: "true", consts.RemoteClusterIDLabel: provider}
		s.Data = map[string][]byte{consts.KubeconfigKey: kc}
		return nil
	}); err != nil {
		return fail(peering.ReasonStepFailed, false, fmt.Errorf("keeping the peering user's kubeconfig in %s/%s: %w", s.Namespace, s.Name, err))
	}
	return nil
}

// authenticate runs the authentication steps liqoctl peer runs, with the
// token's client for the provider.
func (h *handshake) authenticate(ctx context.Context) error {
	local, provider := h.r.ClusterID, h.req.ClusterID
	if err := peering.EnsureTenantNamespaces(ctx, h.progress,
		peering.TenantOf{Client: h.r.Client, Peer: provider, Role: "local"}, peering.TenantOf{Client: h.remote, Peer: local, Role: "remote"}); err != nil {
		return fail(peering.ReasonStepFailed, false, err)
	}
	nonce, err := peering.EnsureNonce(ctx, h.remote, h.progress, local)
	if err != nil {
		return fail(peering.ReasonStepFailed, false, err)
	}
	signed, err := peering.SignNonce(ctx, h.r.Client, h.progress, provider, nonce)
	if err != nil {
		return fail(peering.ReasonStepFailed, false, err)
	}
	t, err := peering.ApplyTenant(ctx, h.remote, h.progress, peering.ForgeTenant(local, signed, h.req.ProxyURL))
	switch {
	case errors.Is(err, peering.ErrTenantRejected):
		return fail(peering.ReasonTenantRejected, true, err)
	case err != nil:
		return fail(peering.ReasonStepFailed, false, err)
	}
	if err := peering.ApplyIdentity(ctx, h.r.Client, h.progress, peering.ForgeIdentity(t, provider)); err != nil {
		return fail(peering.ReasonStepFailed, false, err)
	}
	return nil
}

// network sets up the network fabric as liqoctl network connect does, with
// the peering user's client on the provider (it may write the fabric's
// objects in its tenant namespace there), and waits for the tunnel.
func (h *handshake) network(ctx context.Context) error {
	local, provider := netsetup.Pair(
		netsetup.Side{Client: h.r.Client, Role: "local", Namespace: h.r.Namespace, ID: h.r.ClusterID},
		netsetup.Side{Client: h.remote, Role: "provider", Namespace: h.user.Namespace, ID: h.req.ClusterID})
	s := netsetup.Settings{FabricOptions: *h.req.Network, Wait: true, Out: h.progress}
	if err := netsetup.Connect(ctx, s, local, provider); err != nil {
		return fail(peering.ReasonStepFailed, false, fmt.Errorf("setting up the network fabric: %w", err))
	}
	return nil
}

// slice asks the provider for the request's resources and waits for its
// decision; the vnode controllers make the virtual node of a granted one.
func (h *handshake) slice(ctx context.Context) error {
	want := peering.ForgeResourceSlice(h.r.ClusterID, h.req.ClusterID, h.req.ClusterID, h.req.Resources, h.req.CreateVirtualNode)
	_, err := peering.EnsureResourceSlice(ctx, h.r.Client, h.progress, want)
	switch {
	case errors.Is(err, peering.ErrResourcesDenied), errors.Is(err, peering.ErrSliceNotAuthenticated):
		return fail(peering.ReasonResourcesDenied, true, err)
	case err != nil:
		return fail(peering.ReasonStepFailed, false, err)
	}
	return nil
}
