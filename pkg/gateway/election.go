package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
)

// A gateway may run several replicas (active/standby): the one holding the
// gateway's Lease opens the tunnel and labels its pod active, which the
// server's Service selects and the nodes route to; the others wait. Both
// ends hold the same key (the Secret is the gateway's, not the pod's), so
// the peer sees one gateway whose endpoint moved.
//
// The timings bound a takeover: a replica that stops cleanly releases the
// Lease at once; one that dies is replaced within leaseDuration. An active
// replica that cannot renew for renewDeadline exits (the manager stops),
// so two never carry the tunnel for long.
const (
	leaseDuration = 6 * time.Second
	renewDeadline = 4 * time.Second
	retryPeriod   = 2 * time.Second
)

// standBy clears the active label of this replica's pod before it runs
// for the Lease: a container restarted in the same pod kept its labels.
func standBy(ctx context.Context, c client.Client, cfg Config) error {
	if cfg.PodName == "" {
		return nil
	}
	return labelPod(ctx, c, cfg, nil)
}

// activate runs once this replica holds the Lease: it labels the pod
// active and stays until ctx ends (the Lease lost or the pod stopping).
// The label write is retried: until it lands, nothing reaches this
// replica.
func activate(ctx context.Context, c client.Client, cfg Config, active *atomic.Bool) error {
	active.Store(true)
	log := ctrl.LoggerFrom(ctx).WithName("election")
	log.Info("holding the gateway's Lease: this replica carries the tunnel", "pod", cfg.PodName)
	if cfg.PodName == "" {
		<-ctx.Done()
		return nil
	}
	value := "true"
	_ = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		if err := labelPod(ctx, c, cfg, &value); err != nil {
			log.Error(err, "labelling the pod active; retrying")
			return false, nil
		}
		return true, nil
	})
	<-ctx.Done()
	return nil
}

// labelPod sets the active label of this replica's pod to value, or
// removes it (nil).
func labelPod(ctx context.Context, c client.Client, cfg Config, value *string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]*string{netv1beta1.GatewayActiveLabel: value}}})
	if err != nil {
		return err
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: cfg.Namespace, Name: cfg.PodName}}
	if err := c.Patch(ctx, pod, client.RawPatch("application/merge-patch+json", patch)); err != nil {
		return fmt.Errorf("labelling pod %s/%s: %w", cfg.Namespace, cfg.PodName, err)
	}
	return nil
}

// Rehandshaker is an Applier whose tunnel can start its session over.
type Rehandshaker interface {
	Rehandshake() error
	// HasPeer tells whether the tunnel has its peer (a session to start).
	HasPeer() bool
}

// redial makes a client start a new WireGuard session as soon as the
// connection check misses two answers in a row, then at most every
// redialBackoff while none comes. A server replica that took over holds
// none of the old session's keys and cannot dial the client (it does not
// know where the client is): left alone, the client would wait out
// WireGuard's own timers (15 s and more) before a new handshake.
//
// Before the first answer it starts a session over 0.5 s after the tunnel
// got its peer, then 1, 2 and 4 s after the one before, then every
// redialBackoff: a first handshake that
// reached the server before the server knew the client's key (the two are
// exchanged at the same time) or before its NodePort was routed is
// dropped, and WireGuard alone would send the next one only after its
// 5 s rekey timeout.
func redial(ctx context.Context, check *Checker, r Rehandshaker) {
	log := ctrl.LoggerFrom(ctx).WithName("redial")
	// last is when the tunnel got its peer, then when a session was last
	// started over.
	var last time.Time
	wait1 := firstRedial
	ticker := time.NewTicker(check.FirstInterval())
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		h := check.Health()
		if h.LastAnswer.IsZero() {
			if last.IsZero() {
				if r.HasPeer() {
					last = time.Now()
				}
				continue
			}
			if time.Since(last) < wait1 {
				continue
			}
			wait1 = min(2*wait1, redialBackoff)
		} else if time.Since(h.LastAnswer) < 2*check.Interval+check.Interval/2 || time.Since(last) < redialBackoff {
			continue
		}
		last = time.Now()
		if err := r.Rehandshake(); err != nil {
			log.Error(err, "starting a new WireGuard session")
			continue
		}
		if !h.LastAnswer.IsZero() {
			log.Info("no answer through the tunnel: started a new WireGuard session", "lastAnswer", h.LastAnswer)
		}
	}
}

// firstRedial is the wait, doubled each time, before starting the first
// session over while no answer ever came.
const firstRedial = 500 * time.Millisecond

// redialBackoff spaces new sessions while the server stays silent.
const redialBackoff = 5 * time.Second
