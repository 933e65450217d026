package peer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
	"github.com/liqo-go/liqo/pkg/liqoctl/peeringuser"
)

const (
	// OutOfBandSecret, in the consumer's tenant namespace of the provider,
	// keeps the peering user's kubeconfig, for unpeer out-of-band to clean
	// the provider up.
	OutOfBandSecret = "liqo-out-of-band-kubeconfig"
	// OutOfBandLabel (value "true") marks it.
	OutOfBandLabel = "liqo.io/out-of-band"
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

The token holds the provider's CA: the API server's certificate is checked
against it before the token is sent, and the command stops if it does not
match (an altered token, or a URL that is not the provider's). The provider
must then say it is cluster --cluster-id. The peering goes on as liqoctl peer
--remote-kubeconfig does; a generic command (generated without
--consumer-cluster-id) is claimed by this cluster first, and no other
cluster can use it afterwards. The peering user's kubeconfig is kept in
Secret ` + OutOfBandSecret + ` of the local tenant namespace, so that
liqoctl unpeer out-of-band NAME can clean the provider up.

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

func (o *outOfBandOptions) run(ctx context.Context) error {
	if o.name != o.clusterID {
		return fmt.Errorf("NAME %q differs from --cluster-id %q: the ForeignCluster and the virtual node are named after the provider's cluster ID, so NAME must be %q",
			o.name, o.clusterID, o.clusterID)
	}
	if err := consts.ValidateClusterID(o.clusterID); err != nil {
		return fmt.Errorf("--cluster-id: %w", err)
	}
	tok, err := peeringuser.ParseToken(o.authToken)
	if err != nil {
		return err
	}
	reach := min(o.Timeout, 10*time.Second)
	o.out.Step("Checking the provider's API server certificate")
	switch err := peeringuser.VerifyServer(ctx, o.authURL, tok.CA, reach); {
	case errors.Is(err, peeringuser.ErrUntrustedServer):
		return fmt.Errorf("refusing to send the token: %w; the token was altered, or --auth-url is not the cluster it was issued for", err)
	case err != nil:
		return fmt.Errorf("the provider's API server at %s: %w", o.authURL, err)
	}
	o.out.Info("The API server at %s presents a certificate of the CA in the token", o.authURL)

	o.Remote = factory.Cluster{Role: "remote", RESTConfig: tok.RESTConfig(o.authURL)}
	if err := o.Remote.Connect(ctx, reach); err != nil {
		return err
	}
	id, err := peeringuser.WhoAmI(ctx, o.Remote.Clientset)
	if err != nil {
		return err
	}
	o.Remote.Namespace = id.Namespace
	if err := o.Local.Connect(ctx, reach); err != nil {
		return err
	}
	local, err := o.Local.FindComponents(ctx)
	if err != nil {
		return err
	}
	remote, err := o.Remote.FindComponents(ctx)
	if err != nil {
		return err
	}
	if remote.ID != o.clusterID {
		return fmt.Errorf("the API server at %s is cluster %q, not %q (--cluster-id): refusing to peer", o.authURL, remote.ID, o.clusterID)
	}
	if local.ID == remote.ID {
		return fmt.Errorf("the local and remote clusters are both %q: a cluster cannot peer with itself", local.ID)
	}
	if err := peeringuser.Claim(ctx, o.Remote.Client, id, local.ID, o.out); err != nil {
		return err
	}
	if err := o.keepKubeconfig(ctx, tok, id, remote.ID); err != nil {
		return err
	}
	return o.Run(ctx)
}

// keepKubeconfig stores the peering user's kubeconfig in the local tenant
// namespace, before the peering starts: a peering that fails halfway can
// be undone with unpeer out-of-band.
func (o *outOfBandOptions) keepKubeconfig(ctx context.Context, tok peeringuser.Token, id *peeringuser.Identity, remoteID string) error {
	ns := consts.TenantNamespace(remoteID)
	if err := factory.EnsureTenantNamespace(ctx, o.Local.Client, ns, remoteID); err != nil {
		return fmt.Errorf("local tenant namespace: %w", err)
	}
	kc, err := tok.Kubeconfig(o.authURL, remoteID, id.Name, id.Namespace)
	if err != nil {
		return err
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: OutOfBandSecret, Namespace: ns}}
	if _, err := controllerutil.CreateOrUpdate(ctx, o.Local.Client, s, func() error {
		s.Labels = map[string]string{OutOfBandLabel: "true", consts.RemoteClusterIDLabel: remoteID}
		s.Data = map[string][]byte{consts.KubeconfigKey: kc}
		return nil
	}); err != nil {
		return fmt.Errorf("keeping the peering user's kubeconfig in %s/%s: %w", ns, OutOfBandSecret, err)
	}
	return nil
}

func newUnpeerOutOfBandCommand() *cobra.Command {
	o := &UnpeerOptions{}
	cmd := &cobra.Command{
		Use:   "out-of-band [NAME]",
		Short: "Tear down a peering made with liqoctl peer out-of-band, from the consumer alone",
		Long: `Tear down the peering of the local cluster, the consumer, with the provider
NAME, made with liqoctl peer out-of-band: as liqoctl unpeer does, with the
peering user's kubeconfig kept in the local tenant namespace (Secret
` + OutOfBandSecret + `) to clean the provider up. Without NAME, the only
out-of-band peering of the local cluster is undone.

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
		return err
	}
	name = secret.Labels[consts.RemoteClusterIDLabel]
	kc, err := clientcmd.Load(secret.Data[consts.KubeconfigKey])
	if err != nil {
		return fmt.Errorf("reading the kubeconfig in %s/%s: %w", secret.Namespace, secret.Name, err)
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*kc, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return fmt.Errorf("reading the kubeconfig in %s/%s: %w", secret.Namespace, secret.Name, err)
	}
	ns := consts.DefaultNamespace
	if c := kc.Contexts[kc.CurrentContext]; c != nil && c.Namespace != "" {
		ns = c.Namespace
	}
	o.Remote = factory.Cluster{Role: "remote", Namespace: ns, RESTConfig: cfg}
	o.remoteID = name
	if err := o.Run(ctx); err != nil {
		return err
	}
	// The peering user's credentials go with the peering, whether or not
	// the namespace is kept (--delete-namespaces).
	return client.IgnoreNotFound(o.Local.Client.Delete(ctx, secret))
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
