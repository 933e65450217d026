package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/manager"
	crwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/liqo-go/liqo/pkg/kit"
	"github.com/liqo-go/liqo/pkg/webhook/budget"
	"github.com/liqo-go/liqo/pkg/webhook/podplacement"
	"github.com/liqo-go/liqo/pkg/webhook/podpolicy"
	"github.com/liqo-go/liqo/pkg/webhook/quota"
	"github.com/liqo-go/liqo/pkg/webhook/reflected"
	"github.com/liqo-go/liqo/pkg/webhook/shadowpod"
)

// Options configure the webhook server.
type Options struct {
	// Addr is the host:port the server listens on; port 0 picks a free
	// port at start.
	Addr string
	// AdvertiseHost is the host (IP or DNS name) the API server calls the
	// server at, and the serving certificate's name; Addr's host if empty.
	AdvertiseHost string
	// Pods is what consumers' pods may ask of this provider; the zero
	// value is the safe default.
	Pods podpolicy.PodPolicy
	// Reflected is what consumers' reflected Services, Ingresses and
	// Secrets may ask of this provider; the zero value is the safe default.
	Reflected reflected.ReflectedPolicy
	// Objects bounds what each consumer keeps here of the objects it
	// writes in bulk; budget.DefaultObjectBudget if zero.
	Objects budget.ObjectBudget
	// Report, when set, is given the consumers' usage of Objects.
	Report *budget.Report
	// Serving says who may call the server, how long its certificates
	// live and how often its registration is checked.
	Serving ServingOptions
	// Service, when set, is the Service in front of the server in the
	// cluster: the webhook configurations are the chart's, the serving
	// keys live in a Secret every replica serves from, and AdvertiseHost
	// is not used. Unset, the server registers itself by URL (the
	// manager as a local process).
	Service *ServiceRef
	// Owner owns the Secret of the serving keys.
	Owner kit.InstallOwner
}

// Endpoint returns the host to listen on, the host to advertise and the
// port, checking that the API server can be told where to call.
func (o Options) Endpoint() (listen, advertise string, port int, err error) {
	listen, p, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return "", "", 0, fmt.Errorf("webhook address %q is not host:port: %w", o.Addr, err)
	}
	port, err = strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", "", 0, fmt.Errorf("webhook address %q: port %q is not a number from 0 to 65535", o.Addr, p)
	}
	if o.Service != nil {
		return listen, "", port, nil
	}
	advertise = o.AdvertiseHost
	if advertise == "" {
		advertise = listen
	}
	if ip := net.ParseIP(advertise); advertise == "" || ip != nil && ip.IsUnspecified() {
		return "", "", 0, fmt.Errorf("webhook address %q listens on every interface: give the address the API server calls it at (advertise host)", o.Addr)
	}
	return listen, advertise, port, nil
}

// Setup adds to mgr the admission webhook server, the registration of its
// webhook configurations, and the controllers that go with the webhooks:
// the Events on pods in conflict with their namespace's strategy and the
// Quotas' status.used. The server and the registration run on every replica;
// the controllers on the leader. Nothing is shared between two managers of
// one process.
func Setup(ctx context.Context, mgr manager.Manager, o Options) error {
	listen, advertise, port, err := o.Endpoint()
	if err != nil {
		return err
	}
	if port == 0 {
		if port, err = freePort(listen); err != nil {
			return err
		}
	}
	if err := o.Serving.Validate(); err != nil {
		return err
	}
	auth, err := newCallerAuth(o.Serving, mgr.GetLogger().WithName("webhook"))
	if err != nil {
		return err
	}
	var keys *servingKeys
	if o.Service != nil {
		// Filled from the Secret by the certFollower.
		keys = &servingKeys{names: o.Service.dnsNames(), lifetime: o.Serving.lifetime()}
	} else if keys, err = newServingKeys([]string{advertise}, o.Serving.lifetime(), time.Now()); err != nil {
		return err
	}
	srv := crwebhook.NewServer(crwebhook.Options{Host: listen, Port: port,
		TLSOpts: []func(*tls.Config){func(c *tls.Config) {
			c.GetCertificate = keys.GetCertificate
			auth.configureTLS(c)
		}}})
	srv.Register(probePath, http.HandlerFunc(answerProbe))

	usage, ledger := quota.NewUsageWriter(mgr.GetClient())
	synced, err := quota.FeedLedger(ctx, mgr, ledger)
	if err != nil {
		return fmt.Errorf("watching ShadowPods for the quota ledger: %w", err)
	}
	guard, err := budget.Watch(mgr, o.Objects, o.Report)
	if err != nil {
		return fmt.Errorf("watching consumers' objects for their budget: %w", err)
	}
	decoder := admission.NewDecoder(mgr.GetScheme())
	// handle serves h at path, to the API server only.
	handle := func(path string, h admission.Handler) {
		srv.Register(path, auth.guard(&admission.Webhook{Handler: h}))
	}
	handle(podPath, podplacement.NewPodMutator(mgr.GetClient(), mgr.GetAPIReader(), decoder))
	handle(daemonSetPath, podplacement.NewDaemonSetMutator(decoder))
	handle(shadowPodPath, shadowpod.NewValidator(mgr.GetClient(), mgr.GetAPIReader(), decoder, ledger, synced, o.Pods, guard))
	if err := reflected.IndexIngressHosts(ctx, mgr.GetFieldIndexer()); err != nil {
		return fmt.Errorf("indexing the Ingresses by host: %w", err)
	}
	handle(reflectedPath, reflected.NewValidator(mgr.GetClient(), decoder, o.Reflected, guard))
	handle(replicaPath, reflected.NewReplicaValidator(decoder, guard))
	handle(eventPath, reflected.NewEventValidator(guard.Budget()))
	if err := mgr.Add(srv); err != nil {
		return err
	}

	if err := addKeeper(mgr, o, keys, baseURL(advertise, port)); err != nil {
		return err
	}
	started := srv.StartedChecker()
	if err := mgr.AddReadyzCheck("webhook", func(req *http.Request) error {
		if !keys.ready() {
			return errors.New("no serving certificate yet")
		}
		return started(req)
	}); err != nil {
		return err
	}
	if err := podplacement.SetupConflictReporter(mgr); err != nil {
		return err
	}
	return usage.SetupWithManager(mgr)
}

// addKeeper adds what keeps the serving keys and the webhook
// configurations in step: in the cluster, a publisher on the leader and a
// follower on every replica sharing the keys through a Secret; as a local
// process, the registrar writing this replica's URL.
func addKeeper(mgr manager.Manager, o Options, keys *servingKeys, base string) error {
	log := mgr.GetLogger().WithName("webhook")
	if o.Service == nil {
		return mgr.Add(&registrar{reader: mgr.GetAPIReader(), writer: mgr.GetClient(), base: base, keys: keys,
			interval: o.Serving.interval(), probe: probeServer, log: log})
	}
	follow := min(o.Serving.interval(), followInterval)
	if err := mgr.Add(&certFollower{reader: mgr.GetAPIReader(), secret: o.Service.secret(), keys: keys, interval: follow, log: log}); err != nil {
		return err
	}
	return mgr.Add(&certPublisher{reader: mgr.GetAPIReader(), writer: mgr.GetClient(), service: *o.Service,
		owner: o.Owner, lifetime: o.Serving.lifetime(), interval: o.Serving.interval(), lag: 3 * follow,
		mutating: MutatingConfigurationName, validating: ValidatingConfigurationName, log: log})
}

// followInterval bounds how long a replica serves a certificate after the
// Secret moved past it.
const followInterval = 5 * time.Second

// freePort asks the kernel for a free port on host. The port is free again
// when the server binds it a moment later: a race, but one only another
// process binding random ports could lose.
func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("finding a free port for the webhook server on %q: %w", host, err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}
