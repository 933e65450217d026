package ipam

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha1 "github.com/liqo-go/liqo/apis/ipam/v1alpha1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/kit"
)

// APIServerIP keeps the IP api-server in the components' namespace. The
// gateways masquerade what they forward to it: the API server answers the
// gateway, which knows the way back into the tunnel, and not a peer's pod
// address it has no route to.
type APIServerIP struct {
	Client client.Client
	// Reader reads Service default/kubernetes once, past the cache: the
	// manager caches no Services.
	Reader    client.Reader
	Namespace string
	Owner     kit.InstallOwner
}

// Start makes the IP once the manager runs, retrying until it exists, and
// returns: the kubernetes Service's ClusterIP never changes.
func (a *APIServerIP) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("ipam")
	err := wait.PollUntilContextCancel(ctx, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := a.ensure(ctx); err != nil {
			log.Error(err, "keeping the IP of the API server, will retry", "ip", ipamv1alpha1.APIServerIPName)
			return false, nil
		}
		return true, nil
	})
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// NeedLeaderElection: only the active replica writes.
func (a *APIServerIP) NeedLeaderElection() bool { return true }

func (a *APIServerIP) ensure(ctx context.Context) error {
	var svc corev1.Service
	if err := a.Reader.Get(ctx, types.NamespacedName{Namespace: metav1.NamespaceDefault, Name: "kubernetes"}, &svc); err != nil {
		return fmt.Errorf("reading Service default/kubernetes: %w", err)
	}
	addr, err := netip.ParseAddr(svc.Spec.ClusterIP)
	if err != nil || !addr.Is4() {
		return fmt.Errorf("service default/kubernetes has no IPv4 ClusterIP (%q)", svc.Spec.ClusterIP)
	}
	want := &ipamv1alpha1.IP{
		ObjectMeta: metav1.ObjectMeta{Name: ipamv1alpha1.APIServerIPName, Namespace: a.Namespace,
			Labels: map[string]string{consts.ManagedByLabel: consts.ManagedByValue}},
		Spec: ipamv1alpha1.IPSpec{IP: netv1beta1.IP(addr.String()), Masquerade: ptr.To(true)},
	}
	a.Owner.Own(want)
	var have ipamv1alpha1.IP
	switch err := a.Client.Get(ctx, client.ObjectKeyFromObject(want), &have); {
	case apierrors.IsNotFound(err):
		return a.Client.Create(ctx, want)
	case err != nil:
		return err
	case have.Spec.IP == want.Spec.IP:
		return nil
	}
	// spec.ip is immutable: a cluster whose service CIDR was changed gets
	// its IP replaced (peers see a new twin address).
	if err := a.Client.Delete(ctx, &have, client.Preconditions{UID: &have.UID}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("replacing IP %s (%s, now %s): %w", ipamv1alpha1.APIServerIPName, have.Spec.IP, addr, err)
	}
	return a.Client.Create(ctx, want)
}

// HomeAPIServer is where this cluster's API server is reached from a peer,
// in this cluster's own external CIDR (a peer translates it into its view);
// invalid until the IP is allocated. The port is the kubernetes Service's.
func HomeAPIServer(ctx context.Context, r client.Reader, namespace string) (netip.Addr, error) {
	var ip ipamv1alpha1.IP
	if err := r.Get(ctx, types.NamespacedName{Namespace: namespace, Name: ipamv1alpha1.APIServerIPName}, &ip); err != nil {
		return netip.Addr{}, client.IgnoreNotFound(err)
	}
	// An empty or unparsable status is an IP not allocated yet.
	addr, _ := netip.ParseAddr(string(ip.Status.IP))
	return addr, nil
}
