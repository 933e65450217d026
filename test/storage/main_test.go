// Package storage tests the storage fabric end to end on the testbed's real
// nodes: the liqo StorageClass's volumes bound on a local node (a real PVC
// of the cluster's default class behind them) and on a virtual node (a PVC
// of the provider's default class in the twin namespace), data kept across
// pod restarts by data gravity (a replica whose volume is remote waits,
// Pending, while its virtual node is cordoned), and deleted with their PVC.
package storage

import (
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/liqo-go/liqo/pkg/controllermanager"
	"github.com/liqo-go/liqo/pkg/images/catalog"
	"github.com/liqo-go/liqo/pkg/liqoctl"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/pkg/testbed/fabricopts"
	"github.com/liqo-go/liqo/pkg/testbed/hostpath"
	"github.com/liqo-go/liqo/test/inprocess"
)

var (
	rome, milan *testbed.Cluster
	kubeconfigs = map[string]string{}
)

func TestMain(m *testing.M) {
	if err := testbed.RealNodesSupported(); err != nil {
		_, _ = os.Stderr.WriteString("storage tests need root: " + err.Error() + "\n")
		os.Exit(1)
	}
	testbed.Main(m, func(tb *testbed.Testbed) {
		rome, milan = tb.Cluster("rome"), tb.Cluster("milan")
		// Before the managers start, so that milan's ResourceSlice offers it.
		err := coarseClass(milan)
		var dir string
		if err == nil {
			dir, err = tb.LogDir("liqo-storage-")
		}
		if err == nil {
			for _, c := range []*testbed.Cluster{rome, milan} {
				var m *inprocess.Manager
				if m, err = inprocess.Start(context.Background(), c, dir, withFabric(c)); err != nil {
					break
				}
				kubeconfigs[c.Name] = m.Kubeconfig
			}
		}
		testbed.Must(tb, err)
	},
		testbed.ClusterSpec{Name: "rome", RealNodes: 1, Nodes: []testbed.NodePool{{Count: 0}}},
		testbed.ClusterSpec{Name: "milan", RealNodes: 1, Nodes: []testbed.NodePool{{Count: 0}}},
	)
}

// run executes liqoctl in-process.
func run(ctx context.Context, args ...string) (string, error) {
	return liqoctl.Execute(ctx, args...)
}

// coarseClassName is a class of milan's whose volumes are bigger than
// asked: sizes rounded up to 64Mi.
const coarseClassName, coarseUnit = "coarse", "64Mi"

func coarseClass(c *testbed.Cluster) error {
	class := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: coarseClassName},
		Provisioner:       hostpath.ProvisionerName,
		Parameters:        map[string]string{hostpath.RoundUpParameter: coarseUnit},
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
	}
	_, err := c.Client().StorageV1().StorageClasses().Create(context.Background(), class, metav1.CreateOptions{})
	return err
}

// withFabric turns the network fabric on (liqoctl move volume copies
// through it) and publishes the mover image, which liqoctl's pods run on
// both sides.
func withFabric(c *testbed.Cluster) func(*controllermanager.Options) error {
	return func(o *controllermanager.Options) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // a cold build compiles the images
		defer cancel()
		if err := c.PushComponents(ctx, catalog.Mover); err != nil {
			return err
		}
		return fabricopts.Enable(ctx, c, o)
	}
}
