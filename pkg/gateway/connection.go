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
	if h.Connected {
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

func (r *reporter) ensure(ctx context.Context) (*netv1beta1.Connection, error) {
	var conn netv1beta1.Connection
	err := r.c.Get(ctx, r.key, &conn)
	if apierrors.IsNotFound(err) {
		conn = netv1beta1.Connection{
			ObjectMeta: metav1.ObjectMeta{Name: r.key.Name, Namespace: r.key.Namespace,
				Labels: map[string]string{consts.RemoteClusterIDLabel: r.remote, consts.ManagedByLabel: consts.ManagedByValue}},
			Spec: netv1beta1.ConnectionSpec{Type: r.typ, GatewayRef: r.gateway},
		}
		err = r.c.Create(ctx, &conn)
	}
	return &conn, err
}

// run reports until ctx ends.
func (r *reporter) run(ctx context.Context, check *Checker) {
	var (
		last          time.Time
		wasConnected  bool
		everConnected bool
	)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		h := check.Health()
		everConnected = everConnected || h.Connected
		if h.Connected != wasConnected || time.Since(last) >= r.refresh {
			if err := r.write(ctx, h, everConnected); err == nil {
				last, wasConnected = time.Now(), h.Connected
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
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
