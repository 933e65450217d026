package peer

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
	"github.com/liqo-go/liqo/pkg/peering"
	"github.com/liqo-go/liqo/pkg/peeringuser"
	"github.com/liqo-go/liqo/pkg/wait"
)

const (
	// OutOfBandSecret, in the consumer's tenant namespace of the provider,
	// keeps the peering user's kubeconfig, for unpeer out-of-band to clean
	// the provider up.
	OutOfBandSecret = peering.OutOfBandKubeconfigSecret
	// OutOfBandLabel (value "true") marks it.
	OutOfBandLabel = peering.OutOfBandLabel
)

type outOfBandOptions struct {
	Options
	name, authURL, clusterID, authToken string
}

func newOutOfBandCommand() *cobra.Command {
	o := &outOfBandOptions{}
	cmd := &cobra.Command{
		Use:   "out-of-band NAME --auth-url URL --cluster-id ID --auth-token TOKEN",
		Short: "Peer with a provider from a command it generated (liqoctl generate peer-command)",
		Long: `Peer the local cluster, the consumer, with the provider that printed this
command (liqoctl generate peer-command), with no other access to it: the
command carries the provider's API server URL, its cluster ID and a token
of a peering user holding only what peering needs there.

The command itself talks to the local cluster only: it records the URL, the
cluster ID and the token (with the resources and --proxy-url asked for) in
Secret ` + peering.OutOfBandRequestSecret + ` of the local tenant namespace of the provider,
and the local controller manager performs the peering from there, so it
works from any machine that reaches the local API server, while the local
cluster must reach the provider's (through --proxy-url, if given). The
command waits, printing the manager's progress: the condition
OutOfBandPeeringStatus of the ForeignCluster NAME (kubectl get
foreignclusters NAME -o yaml shows it, with Events), and then the virtual
node.

The token holds the provider's CA: the manager checks the API server's
certificate against it before the token is sent, and gives up if it does
not match (an altered token, or a URL that is not the provider's). The
provider must then say it is cluster --cluster-id. A generic command
(generated without --consumer-cluster-id) is claimed by this cluster first,
and no other cluster can use it afterwards. The peering user's kubeconfig
is kept in Secret ` + OutOfBandSecret + ` of the same namespace, so that
liqoctl unpeer out-of-band NAME can clean the provider up. When the manager
gives up, the command says why and withdraws the request; when it times
out, the manager keeps trying (liqoctl unpeer out-of-band NAME withdraws
the request).

The manager also sets up the network fabric, as liqoctl network connect
would, unless --networking-disabled is given: the network flags are
recorded with the request, and the gateway server runs on the provider
(--gw-server-service-location Local is refused). --in-band is not
supported here (liqoctl peer in-band).

NAME names the peering: the ForeignCluster and the virtual node are named
after the provider's cluster ID, so NAME must be that ID (the generated
command says so).`,
		Example: `  liqoctl peer out-of-band milan --auth-url https://milan.example:6443 --cluster-id milan --auth-token MIIB...
  liqoctl --context rome peer out-of-band milan --auth-url https://milan.example:6443 --cluster-id milan --auth-token MIIB... --networking-disabled`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			o.out = &output.Printer{W: cmd.OutOrStdout(), Verbose: o.Verbose}
			ctx, cancel := context.WithTimeout(cmd.Context(), o.Timeout)
			defer cancel()
			return o.run(ctx)
		},
	}
	o.addFlags(cmd)
	fs := cmd.Flags()
	fs.StringVar(&o.authURL, "auth-url", "", "URL of the provider's API server")
	fs.StringVar(&o.clusterID, "cluster-id", "", "cluster ID of the provider")
	fs.StringVar(&o.authToken, "auth-token", "", "token printed by liqoctl generate peer-command on the provider")
	for _, f := range []string{"auth-url", "cluster-id", "auth-token"} {
		_ = cmd.MarkFlagRequired(f)
	}
	return cmd
}

// request validates the arguments and returns the request they make.
// Pure.
func (o *outOfBandOptions) request() (peering.OutOfBandRequest, error) {
	if o.name != o.clusterID {
		return peering.OutOfBandRequest{}, fmt.Errorf("NAME %q differs from --cluster-id %q: the ForeignCluster and the virtual node are named after the provider's cluster ID, so NAME must be %q",
			o.name, o.clusterID, o.clusterID)
	}
	if err := consts.ValidateClusterID(o.clusterID); err != nil {
		return peering.OutOfBandRequest{}, fmt.Errorf("--cluster-id: %w", err)
	}
	if u, err := url.Parse(o.authURL); err != nil || u.Scheme != "https" || u.Host == "" {
		return peering.OutOfBandRequest{}, fmt.Errorf("--auth-url %q is not an https:// URL", o.authURL)
	}
	if _, err := peeringuser.ParseToken(o.authToken); err != nil {
		return peering.OutOfBandRequest{}, err
	}
	if o.InBand {
		return peering.OutOfBandRequest{}, errors.New("--in-band is not supported by peer out-of-band, whose control plane goes outside the tunnel: use liqoctl peer in-band")
	}
	r := peering.OutOfBandRequest{ID: string(uuid.NewUUID()), AuthURL: o.authURL, ClusterID: o.clusterID, Token: o.authToken,
		ProxyURL: o.ProxyURL, CreateResourceSlice: o.CreateResourceSlice, CreateVirtualNode: o.CreateVirtualNode}
	if !o.NetworkingDisabled {
		var err error
		if r.Network, err = o.Network.OutOfBand(); err != nil {
			return r, err
		}
	}
	if o.CreateResourceSlice {
		var err error
		if r.Resources, err = o.requested(); err != nil {
			return r, err
		}
	}
	return r, r.Validate()
}

func (o *outOfBandOptions) run(ctx context.Context) error {
	req, err := o.request()
	if err != nil {
		return err
	}
	if err := o.Local.Connect(ctx, min(o.Timeout, 10*time.Second)); err != nil {
		return err
	}
	local, err := o.Local.FindComponents(ctx)
	if err != nil {
		return err
	}
	if local.ID == req.ClusterID {
		return fmt.Errorf("the local cluster is %q too: a cluster cannot peer with itself", local.ID)
	}
	c := o.Local.Client
	ns := consts.TenantNamespace(req.ClusterID)
	err = c.Get(ctx, types.NamespacedName{Name: ns}, &corev1.Namespace{})
	createdNS := apierrors.IsNotFound(err)
	if err != nil && !createdNS {
		return fmt.Errorf("reading the local tenant namespace %s: %w", ns, err)
	}
	if err := peering.EnsureTenantNamespace(ctx, c, ns, req.ClusterID); err != nil {
		return fmt.Errorf("local tenant namespace: %w", err)
	}
	o.out.Step("Recording the out-of-band peering request")
	if err := recordRequest(ctx, c, req); err != nil {
		return err
	}
	o.out.Info("Request recorded in Secret %s/%s: the controller manager of %s performs the peering with %s", ns, peering.OutOfBandRequestSecret, local.ID, req.ClusterID)

	if err := o.waitManager(ctx, req); err != nil {
		var gaveUp *managerGaveUp
		if errors.As(err, &gaveUp) {
			o.withdraw(req.ClusterID, createdNS && gaveUp.beforeClaim())
		}
		return err
	}
	if !o.CreateResourceSlice || !o.CreateVirtualNode {
		return nil
	}
	var s authv1beta1.ResourceSlice
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: req.ClusterID}, &s); err != nil {
		return fmt.Errorf("reading the ResourceSlice the controller manager made: %w", err)
	}
	return peering.WaitVirtualNode(ctx, c, o.out, s.Name, s.Status.Resources)
}

// recordRequest creates or replaces the request Secret of req on the
// consumer (c).
func recordRequest(ctx context.Context, c client.Client, req peering.OutOfBandRequest) error {
	want, err := req.Secret()
	if err != nil {
		return err
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: want.Name, Namespace: want.Namespace}}
	if _, err := peering.Apply(ctx, c, s, func() error {
		s.Labels, s.Annotations, s.Data = want.Labels, want.Annotations, want.Data
		return nil
	}); err != nil {
		return fmt.Errorf("recording the request in %s/%s: %w", want.Namespace, want.Name, err)
	}
	return nil
}

// managerGaveUp is the controller manager's Error condition.
type managerGaveUp struct{ reason, message string }

func (e *managerGaveUp) Error() string {
	return fmt.Sprintf("the controller manager gave up the out-of-band peering (%s): %s", e.reason, e.message)
}

// beforeClaim tells whether the manager gave up before the provider was
// used: the request is all there is of the peering.
func (e *managerGaveUp) beforeClaim() bool {
	switch e.reason {
	case peering.ReasonInvalidRequest, peering.ReasonUntrustedServer, peering.ReasonWrongCluster,
		peering.ReasonNotAPeeringUser, peering.ReasonClaimedElsewhere:
		return true
	}
	return false
}

// waitManager waits until the manager reports req Established, printing
// each new step; it fails with the condition's reason and message when the
// manager gives up, or on timeout.
func (o *outOfBandOptions) waitManager(ctx context.Context, req peering.OutOfBandRequest) error {
	start := time.Now()
	var last corev1beta1.Condition
	fc := &corev1beta1.ForeignCluster{}
	err := wait.For(ctx, o.Local.Client, types.NamespacedName{Name: req.ClusterID}, fc, "the controller manager to peer with "+req.ClusterID,
		func(fc *corev1beta1.ForeignCluster) error {
			cond := peering.OutOfBandState(fc, req.ID)
			if cond == nil {
				return wait.NotYet("the controller manager has not taken the request yet (is it running?)")
			}
			if cond.Status != last.Status || cond.Reason != last.Reason || cond.Message != last.Message {
				last = *cond
				switch cond.Status {
				case corev1beta1.PendingStatus:
					o.out.Step("Controller manager: %s", cond.Message)
				case corev1beta1.NotReadyStatus:
					o.out.Warn("controller manager: %s: %s", cond.Reason, cond.Message)
				}
			}
			switch cond.Status {
			case corev1beta1.EstablishedStatus:
				return nil
			case corev1beta1.ErrorStatus:
				return &managerGaveUp{reason: cond.Reason, message: cond.Message}
			}
			return wait.NotYet("%s: %s", cond.Reason, cond.Message)
		})
	if err != nil {
		var gaveUp *managerGaveUp
		if !errors.As(err, &gaveUp) && ctx.Err() != nil {
			return fmt.Errorf("%w; the controller manager keeps trying (liqoctl unpeer out-of-band %s withdraws the request)", err, req.ClusterID)
		}
		return err
	}
	o.out.Timed(start, "Controller manager: %s", peering.OutOfBandState(fc, req.ID).Message)
	return nil
}

// withdraw deletes the request the manager gave up, and the local tenant
// namespace if the command made it and nothing else of the peering is in
// it: a refused peering leaves nothing behind.
// It waits for the namespace to be gone, so that the command can be run
// again at once (with a new token, say).
func (o *outOfBandOptions) withdraw(provider string, namespace bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := withdrawOutOfBand(ctx, o.Local.Client, provider); err != nil {
		o.out.Warn("%v", err)
	}
	if !namespace {
		return
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: consts.TenantNamespace(provider)}}
	if err := client.IgnoreNotFound(o.Local.Client.Delete(ctx, ns)); err != nil {
		o.out.Warn("deleting the local tenant namespace %s: %v", ns.Name, err)
		return
	}
	if err := wait.Gone(ctx, o.Local.Client, client.ObjectKeyFromObject(ns), ns, "the local tenant namespace "+ns.Name); err != nil {
		o.out.Warn("%v", err)
	}
}

// withdrawOutOfBand deletes the out-of-band request for provider on the
// consumer (c), if any, so that the controller manager does not perform it
// (again).
func withdrawOutOfBand(ctx context.Context, c client.Client, provider string) error {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: peering.OutOfBandRequestSecret, Namespace: consts.TenantNamespace(provider)}}
	if err := client.IgnoreNotFound(c.Delete(ctx, s)); err != nil {
		return fmt.Errorf("withdrawing the out-of-band request %s/%s: %w", s.Namespace, s.Name, err)
	}
	return nil
}

// keptRemote is the provider as the peering user's kubeconfig, kept in s,
// reaches it.
func keptRemote(s *corev1.Secret) (factory.Cluster, error) {
	kc, err := clientcmd.Load(s.Data[consts.KubeconfigKey])
	if err != nil {
		return factory.Cluster{}, fmt.Errorf("reading the kubeconfig in %s/%s: %w", s.Namespace, s.Name, err)
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*kc, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return factory.Cluster{}, fmt.Errorf("reading the kubeconfig in %s/%s: %w", s.Namespace, s.Name, err)
	}
	ns := consts.DefaultNamespace
	if c := kc.Contexts[kc.CurrentContext]; c != nil && c.Namespace != "" {
		ns = c.Namespace
	}
	return factory.Cluster{Role: "remote", Namespace: ns, RESTConfig: cfg}, nil
}

func newUnpeerOutOfBandCommand() *cobra.Command {
	o := &UnpeerOptions{}
	cmd := &cobra.Command{
		Use:   "out-of-band [NAME]",
		Short: "Tear down a peering made with liqoctl peer out-of-band, from the consumer alone",
		Long: `Tear down the peering of the local cluster, the consumer, with the provider
NAME, made with liqoctl peer out-of-band: its request (Secret
` + peering.OutOfBandRequestSecret + `) is withdrawn first, so that the controller manager does
not peer again, then as liqoctl unpeer does, with the peering user's
kubeconfig kept in the local tenant namespace (Secret ` + OutOfBandSecret + `)
to clean the provider up. Without NAME, the only out-of-band peering of the
local cluster is undone. A request the manager has not acted on yet is
just withdrawn.

If the provider cannot be reached, the local side is still cleaned up and the
command lists what it left on the provider. The provider's tenant namespace
stays for the peering user, so that the same command can peer again; the
provider's administrator removes both with liqoctl delete peering-user.`,
		Example: `  liqoctl unpeer out-of-band milan
  liqoctl --context rome unpeer out-of-band milan`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.out = &output.Printer{W: cmd.OutOrStdout()}
			ctx, cancel := context.WithTimeout(cmd.Context(), o.Timeout)
			defer cancel()
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			return o.runOutOfBand(ctx, name)
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

// runOutOfBand unpeers from the provider name (or the only one peered out
// of band) with the kubeconfig kept at peering.
func (o *UnpeerOptions) runOutOfBand(ctx context.Context, name string) error {
	if err := o.Local.Connect(ctx, min(o.Timeout/4, 10*time.Second)); err != nil {
		return err
	}
	secret, err := o.outOfBandSecret(ctx, name)
	if err != nil {
		if name != "" {
			if withdrawn, werr := o.withdrawPending(ctx, name); werr != nil || withdrawn {
				return werr
			}
		}
		return err
	}
	name = secret.Labels[consts.RemoteClusterIDLabel]
	if err := withdrawOutOfBand(ctx, o.Local.Client, name); err != nil {
		return err
	}
	if o.Remote, err = keptRemote(secret); err != nil {
		return err
	}
	o.remoteID = name
	if err := o.Run(ctx); err != nil {
		return err
	}
	// The peering user's credentials go with the peering, whether or not
	// the namespace is kept (--delete-namespaces).
	return client.IgnoreNotFound(o.Local.Client.Delete(ctx, secret))
}

// withdrawPending withdraws a request for name the manager has not acted
// on (no kubeconfig kept yet), and tells whether there was one.
func (o *UnpeerOptions) withdrawPending(ctx context.Context, name string) (bool, error) {
	var s corev1.Secret
	key := types.NamespacedName{Namespace: consts.TenantNamespace(name), Name: peering.OutOfBandRequestSecret}
	switch err := o.Local.Client.Get(ctx, key, &s); {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, err
	}
	if err := withdrawOutOfBand(ctx, o.Local.Client, name); err != nil {
		return true, err
	}
	o.out.Info("The out-of-band request for %s was withdrawn: the controller manager had not reached the provider", name)
	return true, nil
}

// outOfBandSecret finds the kubeconfig kept for the peering with name, or
// the only one if name is empty.
func (o *UnpeerOptions) outOfBandSecret(ctx context.Context, name string) (*corev1.Secret, error) {
	var list corev1.SecretList
	sel := client.MatchingLabels{OutOfBandLabel: "true"}
	if name != "" {
		sel[consts.RemoteClusterIDLabel] = name
	}
	if err := o.Local.Client.List(ctx, &list, sel); err != nil {
		return nil, fmt.Errorf("looking for out-of-band peerings: %w", err)
	}
	var found []*corev1.Secret
	for i := range list.Items {
		if s := &list.Items[i]; s.Name == OutOfBandSecret && s.Namespace == consts.TenantNamespace(s.Labels[consts.RemoteClusterIDLabel]) {
			found = append(found, s)
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case name != "":
		return nil, fmt.Errorf("no out-of-band peering with %q here (no Secret %s in %s): a peering made with --remote-kubeconfig is undone with liqoctl unpeer --remote-kubeconfig",
			name, OutOfBandSecret, consts.TenantNamespace(name))
	case len(found) == 0:
		return nil, errors.New("no out-of-band peering here")
	}
	var names []string
	for _, s := range found {
		names = append(names, s.Labels[consts.RemoteClusterIDLabel])
	}
	return nil, fmt.Errorf("%d out-of-band peerings here (%v): name the one to undo", len(found), names)
}
