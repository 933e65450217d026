package move

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
)

func TestPlaceOf(t *testing.T) {
	remote := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{consts.RemoteClusterAnnotation: "milan"}}}
	if got := placeOf(remote); got != (place{provider: "milan"}) || !got.remote() || got.String() != "cluster milan" {
		t.Errorf("remote: %+v", got)
	}
	local := &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{"worker-1"}}}}}}}}}
	if got := placeOf(local); got != (place{node: "worker-1"}) || got.remote() {
		t.Errorf("local: %+v", got)
	}
	if got := placeOf(&corev1.PersistentVolume{}); got != (place{}) || got.String() != "the local cluster" {
		t.Errorf("no affinity: %+v", got)
	}
}

// TestReusable: the PVC made again is the user's, without its binding.
func TestReusable(t *testing.T) {
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "shop", UID: "u1", ResourceVersion: "7", Labels: map[string]string{"app": "db"},
			Annotations: map[string]string{consts.RemoteStorageClassAnnotation: "fast", "pv.kubernetes.io/bind-completed": "yes",
				"volume.kubernetes.io/selected-node": "milan", "volume.beta.kubernetes.io/storage-provisioner": "liqo.io/storage"}},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("liqo"), VolumeName: "pvc-u1",
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound},
	}
	got := reusable(pvc)
	if got.UID != "" || got.ResourceVersion != "" || got.Spec.VolumeName != "" || got.Status.Phase != "" ||
		len(got.Annotations) != 1 || got.Annotations[consts.RemoteStorageClassAnnotation] != "fast" || got.Labels["app"] != "db" ||
		ptr.Deref(got.Spec.StorageClassName, "") != "liqo" || len(got.Spec.AccessModes) != 1 {
		t.Errorf("reusable: %+v", got)
	}
}

// TestBadInput: bad names and flags fail before any cluster is reached.
func TestBadInput(t *testing.T) {
	good := VolumeOptions{Name: "data", Namespace: "shop", TargetNode: "milan", MoverImage: "img", ConnectTimeout: time.Minute, Timeout: time.Minute}
	for want, change := range map[string]func(*VolumeOptions){
		"not a valid PVC name":       func(o *VolumeOptions) { o.Name = "Data/x" },
		"not a valid namespace name": func(o *VolumeOptions) { o.Namespace = "a.b" },
		"--target-node is required":  func(o *VolumeOptions) { o.TargetNode = "" },
		"--mover-image is required":  func(o *VolumeOptions) { o.MoverImage = "" },
		"--connect-timeout":          func(o *VolumeOptions) { o.ConnectTimeout = 0 },
	} {
		o := good
		change(&o)
		o.out = &output.Printer{W: &bytes.Buffer{}}
		if err := o.Run(context.Background()); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", want, err)
		}
	}
}

// TestFlags: -n names the PVC's namespace (as kubectl's), and the mover
// image defaults to liqoctl's version of it.
func TestFlags(t *testing.T) {
	cmd := NewCommand()
	vol, _, err := cmd.Find([]string{"volume"})
	if err != nil {
		t.Fatal(err)
	}
	if err := vol.ParseFlags([]string{"-n", "shop", "--target-node", "milan"}); err != nil {
		t.Fatal(err)
	}
	if ns, _ := vol.Flags().GetString("namespace"); ns != "shop" {
		t.Errorf("-n: %q", ns)
	}
	if img, _ := vol.Flags().GetString("mover-image"); !strings.HasPrefix(img, "ghcr.io/liqo-go/liqo-mover:") {
		t.Errorf("default mover image %q", img)
	}
}

// TestMoverResources: the reference's --containers-* flags become the
// movers' container requests and limits (none when not given); a bad
// quantity is refused by the parser, a request above its limit before any
// cluster is reached.
func TestMoverResources(t *testing.T) {
	parse := func(args ...string) (corev1.ResourceRequirements, error) {
		var r corev1.ResourceRequirements
		fs := pflag.NewFlagSet("volume", pflag.ContinueOnError)
		bindResources(fs, &r)
		return r, fs.Parse(args)
	}
	r, err := parse("--containers-cpu-limits", "1000m", "--containers-ram-requests", "128Mi")
	if err != nil || r.Limits.Cpu().String() != "1" || r.Requests.Memory().String() != "128Mi" || len(r.Requests) != 1 || len(r.Limits) != 1 {
		t.Errorf("resources %+v, %v", r, err)
	}
	for _, bad := range []string{"-1", "lots", "0"} {
		if _, err := parse("--containers-cpu-requests", bad); err == nil {
			t.Errorf("--containers-cpu-requests %s is accepted", bad)
		}
	}
	withFlags := &mover{o: &VolumeOptions{MoverImage: "img", Resources: r}}
	if p := withFlags.pod("send", side{claim: "data"}, "addr"); p.Spec.Containers[0].Resources.Limits.Cpu().String() != "1" {
		t.Errorf("the mover pod's resources: %+v", p.Spec.Containers[0].Resources)
	}
	without := &mover{o: &VolumeOptions{MoverImage: "img"}}
	if p := without.pod("send", side{claim: "data"}, "addr"); len(p.Spec.Containers[0].Resources.Limits)+len(p.Spec.Containers[0].Resources.Requests) != 0 {
		t.Errorf("no flag, yet resources: %+v", p.Spec.Containers[0].Resources)
	}
	over, _ := parse("--containers-cpu-requests", "2", "--containers-cpu-limits", "1")
	if err := checkResources(over); err == nil || !strings.Contains(err.Error(), "--containers-cpu-requests 2 is above --containers-cpu-limits 1") {
		t.Errorf("request above limit: %v", err)
	}
}
