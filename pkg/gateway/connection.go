package gateway

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/kit"
)

// Reasons of the Connection's Connected condition.
const (
	ReasonConnected    = "PeerAnswers"
	ReasonConnecting   = "NoAnswerYet"
	ReasonDisconnected = "PeerLost"
)

// connectionStatus is the Connection status for what the check knows: a
// peer that never answered is still Connecting, one that stopped answering
// is an Error. The latency is rounded to 10 µs so that jitter alone does
// not rewrite the status.
func connectionStatus(st *netv1beta1.ConnectionStatus, gen int64, h Health, everConnected bool, now time.Time) {
	switch {
	case h.Connected:
		st.Value = netv1beta1.Connected
		kit.SetCondition(&st.Conditions, gen, kit.Condition{Type: netv1beta1.ConnectedCondition, OK: true,
			Reason: ReasonConnected, Message: "the peer gateway answers through the tunnel"})
	case everConnected:
		st.Value = netv1beta1.ConnectionError
		kit.SetCondition(&st.Conditions, gen, kit.Condition{Type: netv1beta1.ConnectedCondition,
			Reason: ReasonDisconnected, Message: fmt.Sprintf("no answer from the peer gateway since %s", h.LastAnswer.UTC().Format(time.RFC3339))})
	default:
		st.Value = netv1beta1.Connecting
		kit.SetCondition(&st.Conditions, gen, kit.Condition{Type: netv1beta1.ConnectedCondition,
			Reason: ReasonConnecting, Message: "waiting for the first answer of the peer gateway"})
	}
	if h.Connected && h.Latency > 0 {
		st.Latency = netv1beta1.ConnectionLatency{Value: h.Latency.Round(10 * time.Microsecond).String(), Timestamp: metav1.NewTime(now)}
	}
}

// reporter writes the gateway's Connection: it creates it once, then
// patches its status whenever the check's verdict changes, and the latency
// every Refresh.
type reporter struct {
	c       client.Client
	key     types.NamespacedName
	typ     netv1beta1.ConnectionType
	gateway corev1.ObjectReference
	remote  string
	refresh time.Duration
}

// ensure returns the gateway's Connection, creating it owned by the
// gateway object: the garbage collector deletes it with the gateway, and
// one left by an earlier gateway of the same name (its owner gone, or
// another UID) is replaced rather than reported on, so nobody reads an old
// tunnel's "Connected" as this one's.
func (r *reporter) ensure(ctx context.Context) (*netv1beta1.Connection, error) {
	gw, err := r.gatewayObject(ctx)
	if err != nil {
		return nil, err
	}
	var conn netv1beta1.Connection
	err = r.c.Get(ctx, r.key, &conn)
	if err == nil && conn.Spec.GatewayRef.UID != gw.GetUID() {
		if err := r.c.Delete(ctx, &conn, client.Preconditions{UID: &conn.UID}); client.IgnoreNotFound(err) != nil {
			return nil, fmt.Errorf("replacing the Connection of an earlier gateway: %w", err)
		}
		err = apierrors.NewNotFound(netv1beta1.GroupVersion.WithResource("connections").GroupResource(), r.key.Name)
	}
	if apierrors.IsNotFound(err) {
		ref := r.gateway
		ref.UID = gw.GetUID()
		conn = netv1beta1.Connection{
			ObjectMeta: metav1.ObjectMeta{Name: r.key.Name, Namespace: r.key.Namespace,
				Labels:          map[string]string{consts.RemoteClusterIDLabel: r.remote, consts.ManagedByLabel: consts.ManagedByValue},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: ref.UID}}},
			Spec: netv1beta1.ConnectionSpec{Type: r.typ, GatewayRef: ref},
		}
		err = r.c.Create(ctx, &conn)
	}
	return &conn, err
}

// gatewayObject reads the gateway this pod serves.
func (r *reporter) gatewayObject(ctx context.Context) (client.Object, error) {
	var gw client.Object = &netv1beta1.GatewayServer{}
	if r.typ == netv1beta1.ClientConnection {
		gw = &netv1beta1.GatewayClient{}
	}
	if err := r.c.Get(ctx, types.NamespacedName{Namespace: r.gateway.Namespace, Name: r.gateway.Name}, gw); err != nil {
		return nil, fmt.Errorf("reading gateway %s: %w", r.gateway.Name, err)
	}
	return gw, nil
}

// run reports until ctx ends.
func (r *reporter) run(ctx context.Context, check *Checker) {
	var (
		last          time.Time
		wasConnected  bool
		everConnected bool
	)
	look := func(ctx context.Context) {
		h := check.Health()
		everConnected = everConnected || h.Connected
		if h.Connected != wasConnected || time.Since(last) >= r.refresh {
			if err := r.write(ctx, h, everConnected); err == nil {
				last, wasConnected = time.Now(), h.Connected
			}
		}
	}
	// A look every second, however long a write takes, and one at the
	// first answer: the peering waits for that Connected.
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	answered := check.Answered()
	for {
		look(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		case <-answered:
			answered = nil
		}
	}
}

func (r *reporter) write(ctx context.Context, h Health, everConnected bool) error {
	conn, err := r.ensure(ctx)
	if err != nil {
		return err
	}
	before := conn.DeepCopy()
	connectionStatus(&conn.Status, conn.Generation, h, everConnected, time.Now())
	return kit.PatchStatus(ctx, r.c, conn, before)
}
