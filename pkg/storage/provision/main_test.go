package provision_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	"github.com/liqo-go/liqo/pkg/storage/provision"
	"github.com/liqo-go/liqo/pkg/testbed"
)

const (
	// provisionerName is the fake's.
	provisionerName = "test.liqo.io/fake"
	// behaviour, on a PVC, tells the fake what to do with it and its PV.
	behaviour = "test.liqo.io/behaviour"
	// failFinal: Provision fails with Finished.
	failFinal = "fail-final"
	// ignoreDelete: the PV's Delete says "not mine".
	ignoreDelete = "ignore-delete"
	// failDeleteOnce: the PV's first Delete fails, the next succeed.
	failDeleteOnce = "fail-delete-once"
)

var (
	// cl reads and writes the API server directly, so that what the tests
	// check is the server's state.
	cl   client.Client
	fake = &fakeProvisioner{provisioned: map[string][]provision.Options{}, deleted: map[string]int{}}
)

// TestMain starts one cluster (its kube-controller-manager's PV controller
// binds PVCs to PVs and releases them) and a manager running the
// provisioning controller with the fake.
func TestMain(m *testing.M) {
	testbed.Main(m, func(tb *testbed.Testbed) {
		testbed.Must(tb, start(tb.Cluster("provision")))
	}, testbed.ClusterSpec{Name: "provision", Nodes: []testbed.NodePool{{Count: 1}}})
}

func start(c *testbed.Cluster) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var err error
	if cl, err = client.New(c.Config, client.Options{Scheme: apis.NewScheme()}); err != nil {
		return err
	}
	mgr, err := testbed.NewManager(c.Config, cache.Options{})
	if err != nil {
		return err
	}
	pc := &provision.Controller{Name: "test-provisioner", ProvisionerName: provisionerName, Provisioner: fake, Workers: 2}
	if err := pc.SetupWithManager(mgr); err != nil {
		return err
	}
	return testbed.StartManager(ctx, mgr)
}

// fakeProvisioner records its calls and makes hostPath PVs nothing
// mounts; a PVC's behaviour annotation makes it fail or ignore.
type fakeProvisioner struct {
	mu sync.Mutex
	// provisioned are the calls of Provision, by PVC namespace/name.
	provisioned map[string][]provision.Options
	// deleted counts the calls of Delete, by PV name.
	deleted map[string]int
}

func (f *fakeProvisioner) Provision(_ context.Context, o provision.Options) (*corev1.PersistentVolume, provision.State, error) {
	f.mu.Lock()
	key := o.PVC.Namespace + "/" + o.PVC.Name
	f.provisioned[key] = append(f.provisioned[key], o)
	f.mu.Unlock()
	if o.PVC.Annotations[behaviour] == failFinal {
		return nil, provision.Finished, fmt.Errorf("node %s has no room", o.SelectedNodeName)
	}
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{behaviour: o.PVC.Annotations[behaviour]}},
		Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeReclaimPolicy: *o.StorageClass.ReclaimPolicy,
			AccessModes:                   o.PVC.Spec.AccessModes,
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: o.PVC.Spec.Resources.Requests[corev1.ResourceStorage]},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/nonexistent/" + o.PVName}},
		},
	}, provision.Finished, nil
}

func (f *fakeProvisioner) Delete(_ context.Context, pv *corev1.PersistentVolume) error {
	f.mu.Lock()
	f.deleted[pv.Name]++
	n := f.deleted[pv.Name]
	f.mu.Unlock()
	switch pv.Annotations[behaviour] {
	case ignoreDelete:
		return &provision.IgnoredError{Reason: "kept by the test"}
	case failDeleteOnce:
		if n == 1 {
			return errors.New("the disk is busy")
		}
	}
	return nil
}

// calls returns the Provision calls for a PVC and the Delete calls for a
// PV.
func (f *fakeProvisioner) calls(pvc client.Object, pv string) ([]provision.Options, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]provision.Options(nil), f.provisioned[pvc.GetNamespace()+"/"+pvc.GetName()]...), f.deleted[pv]
}

// newClaim is a 10Mi PVC of class.
func newClaim(ns, name, class string, annotations map[string]string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: &class,
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Mi")}},
		},
	}
}
