package peer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager/auth"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/wait"
)

// peering carries what the steps learn about both clusters.
type peering struct {
	local, remote     *factory.ClusterInfo
	localNS, remoteNS string
	signed            *corev1.Secret
	tenant            *authv1beta1.Tenant
	granted           corev1.ResourceList
	// inBandServer, when set, is the provider's API server URL in the
	// network fabric, given to the consumer instead of the provider's own.
	inBandServer string
}

// Run peers the clusters, printing each step.
func (o *Options) Run(ctx context.Context) error {
	requested, err := o.requested()
	if err != nil {
		return err
	}
	if o.InBand && o.NetworkingDisabled {
		return errors.New("--in-band needs the network fabric: it cannot go with --networking-disabled")
	}
	p, err := o.connect(ctx)
	if err != nil {
		return err
	}
	if !o.NetworkingDisabled {
		n := o.Network
		n.Local, n.Remote, n.Timeout, n.Out = o.Local, o.Remote, o.Timeout, o.out
		if o.InBand {
			n.Wait = true // the control plane goes through the tunnel
		}
		if err := n.Connect(ctx); err != nil {
			return fmt.Errorf("connecting the networks (--networking-disabled peers without): %w", err)
		}
	}
	if o.InBand {
		if p.inBandServer, err = o.inBandAPIServer(ctx, p); err != nil {
			return err
		}
	}
	steps := []func(context.Context, *peering) error{
		o.ensureTenantNamespaces,
		o.handshake,
		o.ensureTenant,
		o.ensureIdentity,
		func(ctx context.Context, p *peering) error { return o.ensureResourceSlice(ctx, p, requested) },
		o.waitVirtualNode,
	}
	for _, step := range steps {
		if err := step(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// connect checks both clusters are reachable, run Liqo in the given
// namespaces, and are two different clusters.
func (o *Options) connect(ctx context.Context) (*peering, error) {
	reach := min(o.Timeout, 10*time.Second)
	for _, c := range []*factory.Cluster{&o.Local, &o.Remote} {
		if err := c.Connect(ctx, reach); err != nil {
			return nil, err
		}
	}
	local, err := o.Local.FindComponents(ctx)
	if err != nil {
		return nil, err
	}
	remote, err := o.Remote.FindComponents(ctx)
	if err != nil {
		return nil, err
	}
	if local.ID == remote.ID {
		return nil, fmt.Errorf("the local and remote clusters are both %q: a cluster cannot peer with itself (or two clusters share a cluster ID)", local.ID)
	}
	o.out.Info("Local cluster %q and remote cluster %q found", local.ID, remote.ID)
	return &peering{local: local, remote: remote,
		localNS: consts.TenantNamespace(remote.ID), remoteNS: consts.TenantNamespace(local.ID)}, nil
}

func (o *Options) ensureTenantNamespaces(ctx context.Context, p *peering) error {
	o.out.Step("Ensuring tenant namespace")
	start := time.Now()
	if err := factory.EnsureTenantNamespace(ctx, o.Local.Client, p.localNS, p.remote.ID); err != nil {
		return fmt.Errorf("local tenant namespace: %w", err)
	}
	if err := factory.EnsureTenantNamespace(ctx, o.Remote.Client, p.remoteNS, p.local.ID); err != nil {
		return fmt.Errorf("remote tenant namespace: %w", err)
	}
	o.out.Timed(start, "Tenant namespace correctly ensured")
	return nil
}

// handshake has the provider issue a nonce and the consumer sign it.
func (o *Options) handshake(ctx context.Context, p *peering) error {
	o.out.Step("Ensuring nonce secret")
	start := time.Now()
	nonceSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: consts.NonceSecret, Namespace: p.remoteNS}}
	if _, err := controllerutil.CreateOrUpdate(ctx, o.Remote.Client, nonceSecret, func() error {
		nonceSecret.Labels = nonceLabels(consts.NonceIssued, p.local.ID)
		return nil
	}); err != nil {
		return fmt.Errorf("creating the nonce Secret on the provider: %w", err)
	}
	o.out.Timed(start, "Nonce secret ensured")

	o.out.Step("Waiting for nonce to be generated")
	start = time.Now()
	if err := wait.For(ctx, o.Remote.Client, client.ObjectKeyFromObject(nonceSecret), nonceSecret, "the provider to generate the nonce",
		func(s *corev1.Secret) error {
			if len(s.Data[consts.NonceKey]) == 0 {
				return wait.NotYet("no nonce in %s/%s", s.Namespace, s.Name)
			}
			return nil
		}); err != nil {
		return err
	}
	nonce := nonceSecret.Data[consts.NonceKey]
	o.out.Timed(start, "Nonce generated successfully")

	o.out.Step("Waiting for nonce to be signed")
	start = time.Now()
	signed := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: consts.SignedNonceSecret, Namespace: p.localNS}}
	if _, err := controllerutil.CreateOrUpdate(ctx, o.Local.Client, signed, func() error {
		signed.Labels = nonceLabels(consts.NonceToSign, p.remote.ID)
		if !bytes.Equal(signed.Data[consts.NonceKey], nonce) {
			signed.Data = map[string][]byte{consts.NonceKey: nonce}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("creating the signed-nonce Secret on the consumer: %w", err)
	}
	if err := wait.For(ctx, o.Local.Client, client.ObjectKeyFromObject(signed), signed, "the local cluster to sign the nonce",
		func(s *corev1.Secret) error {
			if len(s.Data[consts.SignatureKey]) == 0 || !bytes.Equal(s.Data[consts.NonceKey], nonce) {
				return wait.NotYet("%s/%s is not signed", s.Namespace, s.Name)
			}
			return nil
		}); err != nil {
		return err
	}
	o.out.Timed(start, "Nonce signed successfully")
	p.signed = signed
	return nil
}

func nonceLabels(kind, remoteID string) map[string]string {
	return map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.NonceSecretLabel: kind,
		consts.RemoteClusterIDLabel: remoteID}
}

// ensureTenant creates the consumer's Tenant on the provider and waits for
// the provider to verify it and issue the certificate.
func (o *Options) ensureTenant(ctx context.Context, p *peering) error {
	o.out.Step("Creating Tenant on the provider")
	start := time.Now()
	t := &authv1beta1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: p.local.ID, Namespace: p.remoteNS}}
	if _, err := controllerutil.CreateOrUpdate(ctx, o.Remote.Client, t, func() error {
		t.Labels = map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.RemoteClusterIDLabel: p.local.ID}
		t.Spec.ClusterID = corev1beta1.ClusterID(p.local.ID)
		t.Spec.AuthzPolicy = authv1beta1.KeysExchangePolicy
		t.Spec.PublicKey = p.signed.Data[consts.PublicKeyKey]
		t.Spec.CSR = p.signed.Data[consts.CSRKey]
		t.Spec.Signature = p.signed.Data[consts.SignatureKey]
		t.Spec.TenantCondition = authv1beta1.TenantActive
		return nil
	}); err != nil {
		return fmt.Errorf("creating the Tenant on the provider: %w", err)
	}
	if err := wait.For(ctx, o.Remote.Client, client.ObjectKeyFromObject(t), t, "the provider to authenticate the Tenant",
		func(t *authv1beta1.Tenant) error {
			c := meta.FindStatusCondition(t.Status.Conditions, auth.ConditionReady)
			switch {
			case c != nil && c.ObservedGeneration == t.Generation && c.Status == metav1.ConditionTrue && t.Status.AuthParams != nil:
				return nil
			case c != nil && c.ObservedGeneration == t.Generation && c.Reason == "AuthenticationFailed":
				return fmt.Errorf("the provider rejected the Tenant: %s", c.Message)
			case c != nil:
				return wait.NotYet("%s", c.Message)
			}
			return wait.NotYet("the provider has not processed the Tenant")
		}); err != nil {
		return err
	}
	p.tenant = t
	o.out.Timed(start, "Tenant correctly created and authenticated")
	return nil
}

// ensureIdentity stores the provider-issued credentials on the consumer and
// waits until the provider accepts them.
func (o *Options) ensureIdentity(ctx context.Context, p *peering) error {
	o.out.Step("Creating Identity")
	start := time.Now()
	id := &authv1beta1.Identity{ObjectMeta: metav1.ObjectMeta{Name: consts.IdentityName(p.remote.ID), Namespace: p.localNS}}
	if _, err := controllerutil.CreateOrUpdate(ctx, o.Local.Client, id, func() error {
		id.Labels = map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.RemoteClusterIDLabel: p.remote.ID}
		id.Spec.ClusterID = corev1beta1.ClusterID(p.remote.ID)
		id.Spec.Type = authv1beta1.ControlPlaneIdentity
		id.Spec.AuthParams = *p.tenant.Status.AuthParams
		if p.inBandServer != "" {
			id.Spec.AuthParams.APIServer, id.Spec.AuthParams.TLSServerName = p.inBandServer, InBandTLSServerName
		}
		id.Spec.Namespace = &p.remoteNS
		return nil
	}); err != nil {
		return fmt.Errorf("creating the Identity on the consumer: %w", err)
	}
	if err := wait.For(ctx, o.Local.Client, client.ObjectKeyFromObject(id), id, "the Identity to be usable",
		func(id *authv1beta1.Identity) error {
			c := meta.FindStatusCondition(id.Status.Conditions, auth.ConditionReady)
			switch {
			case c != nil && c.ObservedGeneration == id.Generation && c.Status == metav1.ConditionTrue:
				return nil
			case c != nil:
				return wait.NotYet("%s", c.Message)
			}
			return wait.NotYet("the Identity has not been processed")
		}); err != nil {
		return err
	}
	o.out.Timed(start, "Identity correctly created")
	return nil
}

// waitVirtualNode waits for the Node standing for the provider to be Ready.
func (o *Options) waitVirtualNode(ctx context.Context, p *peering) error {
	o.out.Step("Waiting for the virtual node")
	start := time.Now()
	node := &corev1.Node{}
	if err := wait.For(ctx, o.Local.Client, types.NamespacedName{Name: p.sliceName()}, node, "the virtual node to be Ready",
		func(n *corev1.Node) error {
			// When a peering is resized, the node is Ready with its old size
			// until the virtual kubelet restarts with the new one.
			for name, q := range p.granted {
				if got := n.Status.Allocatable[name]; got.Cmp(q) != 0 {
					return wait.NotYet("node %s offers %s %s, %s granted", n.Name, got.String(), name, q.String())
				}
			}
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					return nil
				}
				if c.Type == corev1.NodeReady {
					return wait.NotYet("node %s is not Ready: %s", n.Name, c.Message)
				}
			}
			return wait.NotYet("node %s has no Ready condition yet", n.Name)
		}); err != nil {
		return err
	}
	o.out.Timed(start, "Virtual node %s is Ready", node.Name)
	return nil
}
