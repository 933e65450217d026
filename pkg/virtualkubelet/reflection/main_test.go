package reflection

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	"github.com/liqo-go/liqo/deploy/charts/liqo/crds"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager/shadowpod"
	"github.com/liqo-go/liqo/pkg/remotecluster"
	"github.com/liqo-go/liqo/pkg/testbed"
)

// The test clusters: the consumer has a virtual node backed by provider,
// whose ShadowPod controller runs for the whole test binary.
const (
	consumerID = "consumer"
	providerID = "provider"
	vnodeName  = "virtual-provider"
	hostIP     = "127.0.0.2"
)

var (
	consumer, provider     client.Client
	consumerCS, providerCS kubernetes.Interface
	// consumerConfig and providerConfig are the clusters' admin
	// configurations; mapCache holds the consumer's NamespaceMaps.
	consumerConfig, providerConfig *rest.Config
	mapCache                       cache.Cache
	// localCluster is the consumer as every reflection of the tests sees
	// it: their local namespace caches are shared, as in a manager.
	localCluster *remotecluster.Cluster
)

// TestMain starts a consumer and a provider cluster, the provider's
// ShadowPod controller and the reflection of one virtual node, whose
// credentials on the provider are simply the admin's: what the reflection
// may do there is the peering tests' business.
func TestMain(m *testing.M) {
	testbed.Main(m, func(tb *testbed.Testbed) {
		if err := setup(tb.Cluster(consumerID).Config, tb.Cluster(providerID).Config); err != nil {
			fmt.Fprintln(os.Stderr, "setting up the reflection:", err)
			tb.Stop()
			os.Exit(1)
		}
	}, testbed.ClusterSpec{Name: consumerID, Nodes: []testbed.NodePool{{Count: 1}}},
		testbed.ClusterSpec{Name: providerID, Nodes: []testbed.NodePool{{Count: 2, Pods: 250}}})
}

func setup(ccfg, pcfg *rest.Config) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	logger := funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, "reflection test:", prefix, args) },
		funcr.Options{Verbosity: -1})
	ctrl.SetLogger(logger)
	for _, cfg := range []*rest.Config{ccfg, pcfg} {
		if err := crds.Install(ctx, cfg); err != nil {
			return err
		}
	}
	var err error
	if consumer, err = client.New(ccfg, client.Options{Scheme: apis.NewScheme()}); err != nil {
		return err
	}
	if provider, err = client.New(pcfg, client.Options{Scheme: apis.NewScheme()}); err != nil {
		return err
	}
	consumerCS, providerCS = kubernetes.NewForConfigOrDie(ccfg), kubernetes.NewForConfigOrDie(pcfg)

	if err := startShadowPods(ctx, pcfg); err != nil {
		return err
	}
	// A bare Node: pods are bound to it by name, no scheduler involved.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: vnodeName,
		Labels: map[string]string{consts.TypeLabel: consts.TypeVirtualNode, consts.RemoteClusterIDLabel: providerID}}}
	if err := consumer.Create(ctx, node); err != nil {
		return err
	}
	if err := consumer.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: consts.TenantNamespace(providerID)}}); err != nil {
		return err
	}

	consumerConfig, providerConfig = ccfg, pcfg
	mapCache, err = cache.New(ccfg, cache.Options{Scheme: apis.NewScheme()})
	if err != nil {
		return err
	}
	go func() { _ = mapCache.Start(context.Background()) }()
	broadcaster := record.NewBroadcaster()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: consumerCS.CoreV1().Events("")})
	if localCluster, err = remotecluster.New(consumerID, "", ccfg, remotecluster.Options{Scheme: apis.NewScheme()}); err != nil {
		return err
	}
	remote, err := remotecluster.New(providerID, "", pcfg, remotecluster.Options{Scheme: apis.NewScheme()})
	if err != nil {
		return err
	}
	go func() {
		err := Run(context.Background(), Config{NodeName: vnodeName, LocalClusterID: consumerID, ProviderID: providerID,
			Local: consumerCS, LocalCluster: localCluster, Maps: mapCache, Remote: remote, Scheme: apis.NewScheme(), HostIP: hostIP,
			Recorder:        broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "liqo-virtual-kubelet"}),
			beforeReconcile: testBombs.before})
		if err != nil {
			fmt.Fprintln(os.Stderr, "reflection stopped:", err)
		}
	}()
	return nil
}

func startShadowPods(ctx context.Context, cfg *rest.Config) error {
	mgr, err := testbed.NewManager(cfg, cache.Options{ByObject: shadowpod.Caches(nil)})
	if err != nil {
		return err
	}
	if err := (&shadowpod.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return err
	}
	return testbed.StartManager(ctx, mgr)
}
