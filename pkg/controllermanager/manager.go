package controllermanager

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/liqo-go/liqo/apis"
	"github.com/liqo-go/liqo/pkg/clientcfg"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager/auth"
	"github.com/liqo-go/liqo/pkg/controllermanager/fabric"
	"github.com/liqo-go/liqo/pkg/controllermanager/foreigncluster"
	"github.com/liqo-go/liqo/pkg/controllermanager/gateway"
	"github.com/liqo-go/liqo/pkg/controllermanager/ipam"
	"github.com/liqo-go/liqo/pkg/controllermanager/offloading"
	"github.com/liqo-go/liqo/pkg/controllermanager/outofband"
	"github.com/liqo-go/liqo/pkg/controllermanager/shadowendpointslice"
	"github.com/liqo-go/liqo/pkg/controllermanager/shadowpod"
	"github.com/liqo-go/liqo/pkg/controllermanager/slices"
	"github.com/liqo-go/liqo/pkg/controllermanager/teardown"
	"github.com/liqo-go/liqo/pkg/controllermanager/vnode"
	"github.com/liqo-go/liqo/pkg/kit"
	"github.com/liqo-go/liqo/pkg/mcs/clusterset"
	"github.com/liqo-go/liqo/pkg/mcs/export"
	"github.com/liqo-go/liqo/pkg/mcs/imports"
	"github.com/liqo-go/liqo/pkg/mcs/publish"
	"github.com/liqo-go/liqo/pkg/placement/gate"
	"github.com/liqo-go/liqo/pkg/remotecluster"
	"github.com/liqo-go/liqo/pkg/storage"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/kubeletapi"
	"github.com/liqo-go/liqo/pkg/webhook"
	"github.com/liqo-go/liqo/pkg/webhook/budget"
)

// Run bootstraps the cluster's identity and runs every controller until ctx
// is done. It returns an error if the bootstrap fails or a controller cannot
// start.
func Run(ctx context.Context, cfg *rest.Config, o Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	if o.APIServerURL == "" {
		o.APIServerURL = cfg.Host
	}
	cfg = clientcfg.Tuned(cfg)
	cs, err := kubernetes.NewForConfig(clientcfg.Protobuf(cfg))
	if err != nil {
		return err
	}
	keys, err := bootstrap(ctx, cs, &o)
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	ca, err := clusterCA(cfg)
	if err != nil {
		return err
	}
	if o.owner, err = kit.NewInstallOwner(ctx, cs, o.InstallOwner); err != nil {
		return err
	}
	o.Gateway.Owner, o.IPAM.Owner, o.Fabric.Owner = o.owner, o.owner, o.owner

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: apis.NewScheme(),
		// No cached object keeps its managed fields: nothing reads them,
		// and they are often the larger part of an object. (An update
		// without them leaves them as they are on the server.)
		Cache:  cache.Options{DefaultTransform: cache.TransformStripManagedFields(), ByObject: cacheByObject()},
		Client: clientOptions(),
		// Tests and the playground run several managers in one process.
		Controller:                    config.Controller{SkipNameValidation: ptr.To(true)},
		Logger:                        o.Logger,
		Metrics:                       kit.MetricsServer(o.MetricsAddr),
		HealthProbeBindAddress:        o.HealthAddr,
		PprofBindAddress:              o.PprofAddr,
		LeaderElection:                true,
		LeaderElectionID:              consts.ControllerManagerLease,
		LeaderElectionNamespace:       o.Namespace,
		LeaderElectionReleaseOnCancel: true,
		GracefulShutdownTimeout:       ptr.To(5 * time.Second),
	})
	if err != nil {
		return err
	}
	if o.HealthAddr != "0" {
		_ = mgr.AddHealthzCheck("ping", healthz.Ping)
		_ = mgr.AddReadyzCheck("ping", healthz.Ping)
	}
	// The one way to the providers: a Cluster per provider and credentials,
	// shared by every controller, virtual node and request served for it.
	remotes, err := addRemotes(ctx, mgr)
	if err != nil {
		return err
	}
	kubeletAPI, err := addKubeletAPI(mgr, cs, remotes, o)
	if err != nil {
		return err
	}

	local := o.ClusterID
	// The webhooks count each consumer's objects; its Tenant shows the count.
	budget := &budget.Report{}
	exports := clusterset.NewStore()
	setups := []func() error{
		func() error {
			return (&auth.NonceReconciler{Client: mgr.GetClient(), ClusterID: local, Lifetime: o.NonceLifetime}).SetupWithManager(mgr)
		},
		func() error {
			return (&auth.SignerReconciler{Client: mgr.GetClient(), Keys: keys, ClusterID: local}).SetupWithManager(mgr)
		},
		func() error {
			return (&auth.TenantReconciler{Client: mgr.GetClient(), Clientset: cs, ClusterID: local,
				CA: ca, APIServerURL: o.APIServerURL, ClusterRole: ConsumerClusterRole, CertLifetime: o.ConsumerCertLifetime,
				ReservedNamespaces: o.Twins.ReservedNames, Budget: budget}).SetupWithManager(mgr)
		},
		func() error {
			return (&auth.IdentityReconciler{Client: mgr.GetClient(), Keys: keys, ClusterID: local, Remotes: remotes}).SetupWithManager(mgr)
		},
		func() error {
			return (&slices.ReplicatorReconciler{Client: mgr.GetClient(), ClusterID: local, Remotes: remotes}).SetupWithManager(mgr)
		},
		func() error {
			return (&slices.ProviderReconciler{Client: mgr.GetClient(), ClusterID: local, ClusterLabels: o.ClusterLabels,
				SharingPercentage: o.SharingPercentage, Deny: o.SlicePolicy == SliceDeny,
				Enforcement: o.QuotaEnforcement, VirtualStorageClass: o.Storage.VirtualClass,
				RuntimeClasses: o.PodPolicy.RuntimeClasses}).SetupWithManager(mgr)
		},
		func() error { return (&gate.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr) },
		func() error {
			return (&slices.FitReconciler{Client: mgr.GetClient(), ClusterID: local, NodeSelector: o.OffloadedPodNodeSelector}).SetupWithManager(mgr)
		},
		func() error { return (&slices.TenantStateReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr) },
		func() error {
			return (&vnode.CreatorReconciler{Client: mgr.GetClient(), ClusterID: local}).SetupWithManager(mgr)
		},
		func() error {
			return (&vnode.Reconciler{Client: mgr.GetClient(), Clientset: cs, ClusterID: local, Namespace: o.Namespace,
				HealthCheckInterval: o.HealthCheckInterval, UnreachableGrace: o.ProviderUnreachableGrace, KubeletAPI: kubeletAPI,
				Reflected: o.Reflection, Remotes: remotes, UnschedulableTimeout: o.RemoteUnschedulableTimeout}).SetupWithManager(mgr)
		},
		func() error { return (&foreigncluster.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr) },
		func() error {
			return (&outofband.Reconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), ClusterID: local, Namespace: o.Namespace}).SetupWithManager(mgr)
		},
		func() error {
			return (&shadowpod.Reconciler{Client: mgr.GetClient(), NodeSelector: o.OffloadedPodNodeSelector,
				MetadataOnly: o.PodPolicy.MetadataOnly, MaxGracePeriod: o.MaxGracePeriod,
				KeepImagePullPolicy: o.PodPolicy.KeepImagePullPolicy}).SetupWithManager(mgr)
		},
		func() error { return teardown.Setup(mgr, o.Teardown, OffloadingClusterRole) },
		func() error { return (&shadowendpointslice.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr) },
		func() error {
			twins := o.Twins.ForServiceTypes(o.ReflectedPolicy.ServiceTypes)
			twins.Egress.Local = o.IPAM.LocalNetworks()
			return (&offloading.TwinReconciler{Client: mgr.GetClient(), ClusterRole: OffloadingClusterRole,
				PodSecurity: o.PodPolicy.Level, Options: twins, Reader: mgr.GetAPIReader()}).SetupWithManager(mgr)
		},
		func() error {
			return (&offloading.NamespaceOffloadingReconciler{Client: mgr.GetClient(), ClusterID: local, LiqoNamespace: o.Namespace}).SetupWithManager(mgr)
		},
		func() error {
			return (&offloading.MapReplicator{Client: mgr.GetClient(), ClusterID: local, Remotes: remotes}).SetupWithManager(mgr)
		},
		func() error {
			return gateway.NewServerReconciler(mgr.GetClient(), mgr.GetEventRecorderFor("liqo-gateway"), o.Gateway).SetupWithManager(mgr)
		},
		func() error {
			return gateway.NewClientReconciler(mgr.GetClient(), mgr.GetEventRecorderFor("liqo-gateway"), o.Gateway).SetupWithManager(mgr)
		},
		func() error {
			io := o.IPAM
			io.Namespace = o.Namespace
			return ipam.Setup(mgr, io)
		},
		func() error {
			if !o.IPAM.PodCIDR.IsValid() {
				return nil // the agent needs the pod CIDR; the Configurations say it is missing
			}
			fo := o.Fabric
			fo.PodCIDR = o.IPAM.PodCIDR
			return mgr.Add(&fabric.Agent{Client: mgr.GetClient(), Options: fo, Namespace: o.Namespace})
		},
		func() error {
			wo := o.webhookOptions()
			wo.Report = budget
			return webhook.Setup(ctx, mgr, wo)
		},
		// Multi-Cluster Services: the peers' exports are read into one
		// store, which judges the cluster's exports and feeds its imports.
		func() error { return (&export.Reconciler{ClusterID: local, Clusterset: exports}).SetupWithManager(mgr) },
		func() error {
			return (&clusterset.Reader{Client: mgr.GetClient(), ClusterID: local, Remotes: remotes, Store: exports}).SetupWithManager(mgr)
		},
		func() error { return (&publish.Reconciler{ClusterID: local, Remotes: remotes}).SetupWithManager(mgr) },
		func() error { return (&imports.Reconciler{ClusterID: local, Store: exports}).SetupWithManager(mgr) },
		func() error { return storage.Setup(mgr, cs, o.Storage, remotes, local, o.SelfProvision) },
	}
	for _, setup := range setups {
		if err := setup(); err != nil {
			return err
		}
	}
	if err := mgr.Add(manager.RunnableFunc(kit.ReleaseStartupMemory(mgr, o.Logger))); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// addKubeletAPI makes the kubelet API the virtual nodes publish, serving
// logs, exec and port-forward of offloaded pods and their usage, and has
// mgr run it.
func addKubeletAPI(mgr ctrl.Manager, cs kubernetes.Interface, remotes *remotecluster.Registry, o Options) (*kubeletapi.Server, error) {
	cfg := o.kubeletAPIConfig()
	cfg.Client, cfg.Logger = cs, o.Logger.WithName("kubelet-api")
	// The manager caches only its own Pods, not the offloaded ones.
	resolver := &kubeletapi.PodResolver{Reader: mgr.GetAPIReader(), Remotes: remotes}
	cfg.Resolver, cfg.Usage = resolver, resolver
	s, err := kubeletapi.New(cfg)
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(s); err != nil {
		return nil, err
	}
	return s, nil
}

// addRemotes makes the registry of the providers' Clusters. It reads the
// credentials from the API server (the cache keeps no Secret's data), and
// hears of every change of a kubeconfig Secret from the manager's cache,
// which keeps their metadata: a Cluster whose credentials changed is
// marked stale at once, and its users move to the new one.
func addRemotes(ctx context.Context, mgr ctrl.Manager) (*remotecluster.Registry, error) {
	remotes := remotecluster.NewRegistry(mgr.GetAPIReader(), remotecluster.Options{Scheme: mgr.GetScheme()})
	secrets, err := mgr.GetCache().GetInformer(ctx, &corev1.Secret{}, cache.BlockUntilSynced(false))
	if err != nil {
		return nil, err
	}
	if _, err := secrets.AddEventHandler(remotes.SecretHandler()); err != nil {
		return nil, err
	}
	return remotes, nil
}

// clusterCA is the CA peers must trust to reach this API server.
func clusterCA(cfg *rest.Config) ([]byte, error) {
	if len(cfg.CAData) > 0 {
		return cfg.CAData, nil
	}
	if cfg.CAFile != "" {
		return readFile(cfg.CAFile)
	}
	return nil, nil
}
