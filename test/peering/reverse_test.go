package peering

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/identity"
	"github.com/liqo-go/liqo/test/harness"
)

// TestReversePeeringObjects is issue 30's attack: rome and milan peer both
// ways, so milan's tenant namespace of rome holds both rome's replicas
// (rome's requests to milan) and milan's own NamespaceMap and ResourceSlice
// toward rome, which drive milan's offloading there. rome, with exactly the
// credentials its peering gives it (its Identity's kubeconfig), tries to
// make milan replicate namespaces of its choice, with their Secrets, into
// rome: by editing milan's map, by planting a map or a slice milan would
// take for its own, by deleting milan's. Each write is refused (403). Then,
// as if such a write had got through, milan's administrator lists the same
// namespaces in the map: milan's offloading removes the entries, its
// reflection refuses them with an Event, and none of their Secrets reaches
// rome, while a Secret of the namespace milan really offloads does.
func TestReversePeeringObjects(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	peer(t, "rome", "milan")
	peer(t, "milan", "rome")
	// Last: unpeer keeps milan's (empty) map in the namespace rome's
	// peering still uses, where it would take the name of a replica of
	// rome's the later tests make.
	t.Cleanup(func() {
		err := tb.Cluster("milan").Client().CoreV1().RESTClient().Delete().AbsPath("/apis/offloading.liqo.io/v1beta1/namespaces/" +
			consts.TenantNamespace("rome") + "/namespacemaps/rome").Do(context.Background()).Error()
		if client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting milan's map toward rome: %v", err)
		}
	})
	t.Cleanup(func() {
		if out, err := run(context.Background(), "unpeer", "--kubeconfig", kubeconfigs["milan"], "--remote-kubeconfig", kubeconfigs["rome"]); err != nil {
			t.Errorf("unpeer milan -> rome: %v\n%s", err, out)
		}
	})
	milan, rome := clusterClient(t, "milan"), clusterClient(t, "rome")
	asRome, err := client.New(credentials(t, "rome", "milan"), client.Options{Scheme: apis.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	tenant := consts.TenantNamespace("rome")
	mapKey := consts.NamespaceMapKey("rome") // milan's own map toward rome

	// What milan offloads to rome, and what it keeps: a namespace with a
	// Secret its administrator planted, one whose offloading selects no
	// cluster, and Liqo's own (the cluster identity key).
	const offloaded, planted, unselected = "reverse-app", "reverse-planted", "reverse-unselected"
	for _, ns := range []string{offloaded, planted, unselected} {
		createNamespaceOn(ctx, t, milan, ns)
		t.Cleanup(func() {
			_ = milan.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		})
	}
	for _, ns := range []string{planted, unselected} {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "milan-only", Namespace: ns}, StringData: map[string]string{"token": "milan's"}}
		if err := milan.Create(ctx, secret); err != nil {
			t.Fatal(err)
		}
	}
	nowhere := &offv1beta1.NamespaceOffloading{ObjectMeta: metav1.ObjectMeta{Name: offv1beta1.NamespaceOffloadingName, Namespace: unselected},
		Spec: offv1beta1.NamespaceOffloadingSpec{ClusterSelector: corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "region", Operator: corev1.NodeSelectorOpIn, Values: []string{"nowhere"}}}}}}}}
	if err := milan.Create(ctx, nowhere); err != nil {
		t.Fatal(err)
	}
	if out, err := run(ctx, "offload", "namespace", offloaded, "--kubeconfig", kubeconfigs["milan"], "--timeout", "60s"); err != nil {
		t.Fatalf("milan offloading %s to rome: %v\n%s", offloaded, err, out)
	}
	t.Cleanup(func() {
		if out, err := run(context.Background(), "unoffload", "namespace", offloaded, "--kubeconfig", kubeconfigs["milan"], "--timeout", "60s"); err != nil {
			t.Errorf("unoffload %s: %v\n%s", offloaded, err, out)
		}
	})
	// Twins on rome, named by rome's rule for milan's namespaces.
	twin := func(ns string) string { return ns + "-milan" }
	hostile := map[string]string{planted: twin(planted), unselected: twin(unselected), consts.DefaultNamespace: twin(consts.DefaultNamespace)}

	t.Run("rome's credentials cannot touch milan's objects in the shared namespace", func(t *testing.T) {
		forbidden := func(what string, err error) {
			t.Helper()
			if !apierrors.IsForbidden(err) {
				t.Errorf("%s with rome's credentials: want 403 Forbidden, got %v", what, err)
			} else {
				t.Logf("%s: %v", what, err)
			}
		}
		var own offv1beta1.NamespaceMap
		if err := asRome.Get(ctx, mapKey, &own); err != nil {
			t.Fatalf("reading milan's map toward rome: %v", err)
		}
		if own.Labels[consts.ReplicationLabel] != "" {
			t.Fatalf("%s is rome's replica, not milan's own map: %v", mapKey, own.Labels)
		}
		patch := fmt.Sprintf(`{"spec":{"desiredMapping":{%q:%q,%q:%q}}}`, planted, twin(planted), consts.DefaultNamespace, twin(consts.DefaultNamespace))
		forbidden("adding namespaces to milan's map", asRome.Patch(ctx, own.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(patch))))
		relabel := fmt.Sprintf(`{"metadata":{"labels":{%q:"true"}}}`, consts.ReplicationLabel)
		forbidden("labelling milan's map as a replica", asRome.Patch(ctx, own.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(relabel))))

		plantedMap := &offv1beta1.NamespaceMap{ObjectMeta: metav1.ObjectMeta{Name: "planted", Namespace: tenant,
			Labels: map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.RemoteClusterIDLabel: "rome"}},
			Spec: offv1beta1.NamespaceMapSpec{DesiredMapping: hostile}}
		forbidden("creating a map without the replication label", asRome.Create(ctx, plantedMap))

		var slices authv1beta1.ResourceSliceList
		if err := asRome.List(ctx, &slices, client.InNamespace(tenant)); err != nil {
			t.Fatal(err)
		}
		var milans *authv1beta1.ResourceSlice
		for i := range slices.Items {
			if s := &slices.Items[i]; s.Labels[consts.ReplicationLabel] == "" {
				milans = s
			}
		}
		if milans == nil {
			t.Fatalf("no ResourceSlice of milan's toward rome in %s", tenant)
		}
		more := fmt.Sprintf(`{"spec":{"resources":{"cpu":%q}}}`, "1")
		forbidden("changing milan's ResourceSlice", asRome.Patch(ctx, milans.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(more))))
		id := corev1beta1.ClusterID("milan")
		fake := &authv1beta1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "planted", Namespace: tenant},
			Spec: authv1beta1.ResourceSliceSpec{ConsumerClusterID: &id, Resources: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}
		forbidden("creating a ResourceSlice without the replication label", asRome.Create(ctx, fake))

		// Last, so that the next step finds them where the refusals left
		// them (without the fix, they go).
		forbidden("deleting milan's ResourceSlice", asRome.Delete(ctx, milans.DeepCopy()))
		forbidden("deleting milan's map", asRome.Delete(ctx, own.DeepCopy()))

		// rome's own replica stays rome's to write.
		var mine authv1beta1.ResourceSlice
		if err := asRome.Get(ctx, types.NamespacedName{Namespace: tenant, Name: "milan"}, &mine); err != nil {
			t.Fatalf("reading rome's own replicated slice: %v", err)
		}
		if err := asRome.Patch(ctx, mine.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"test.liqo.io/touched":"yes"}}}`))); err != nil {
			t.Errorf("rome writing its own replica: %v", err)
		}
	})

	t.Run("entries milan did not offload reach no Secret of milan's on rome", func(t *testing.T) {
		// As if a write had got through: milan's administrator lists them.
		var own offv1beta1.NamespaceMap
		harness.Eventually(ctx, t, "milan's map listing "+offloaded, func() (bool, error) {
			err := milan.Get(ctx, mapKey, &own)
			return err == nil && own.Spec.DesiredMapping[offloaded] != "", client.IgnoreNotFound(err)
		})
		for local, remote := range hostile {
			own.Spec.DesiredMapping[local] = remote
		}
		if err := milan.Update(ctx, &own); err != nil {
			t.Fatal(err)
		}
		// A Secret written now in the namespace milan offloads reaches rome:
		// the reflection is running while the others are refused.
		control := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "control", Namespace: offloaded}, StringData: map[string]string{"k": "v"}}
		if err := milan.Create(ctx, control); err != nil {
			t.Fatal(err)
		}
		harness.Eventually(ctx, t, "the offloaded namespace's Secret on rome", func() (bool, error) {
			err := rome.Get(ctx, types.NamespacedName{Namespace: twin(offloaded), Name: control.Name}, &corev1.Secret{})
			return err == nil, client.IgnoreNotFound(err)
		})
		harness.Eventually(ctx, t, "milan's map without the entries it did not offload", func() (bool, error) {
			if err := milan.Get(ctx, mapKey, &own); err != nil {
				return false, err
			}
			for local := range hostile {
				if _, ok := own.Spec.DesiredMapping[local]; ok {
					return false, nil
				}
			}
			_, ok := own.Spec.DesiredMapping[offloaded]
			return ok, nil
		})
		waitMapEvent(ctx, t, "StrayEntryRemoved", planted)
		// The twins rome may have made meanwhile go, empty.
		for local, remote := range hostile {
			var secrets corev1.SecretList
			if err := rome.List(ctx, &secrets, client.InNamespace(remote)); err != nil {
				t.Fatal(err)
			}
			for _, s := range secrets.Items {
				t.Errorf("Secret %s/%s of milan's namespace %s reached rome", s.Namespace, s.Name, local)
			}
		}
		for _, name := range []string{identity.SecretName, "milan-only"} {
			var secrets corev1.SecretList
			if err := rome.List(ctx, &secrets, client.MatchingFields{"metadata.name": name}); err != nil {
				t.Fatal(err)
			}
			for _, s := range secrets.Items {
				if strings.HasSuffix(s.Namespace, "-milan") {
					t.Errorf("milan's Secret %s reached rome in %s", name, s.Namespace)
				}
			}
		}
	})
}

// createNamespaceOn creates namespace name with c, if it does not exist.
func createNamespaceOn(ctx context.Context, t *testing.T, c client.Client, name string) {
	t.Helper()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// waitMapEvent waits for an Event of reason on milan's NamespaceMap toward
// rome naming namespace ns.
func waitMapEvent(ctx context.Context, t *testing.T, reason, ns string) {
	t.Helper()
	cs := tb.Cluster("milan").Client()
	harness.Eventually(ctx, t, "event "+reason+" naming "+ns+" on milan's NamespaceMap", func() (bool, error) {
		list, err := cs.CoreV1().Events(consts.TenantNamespace("rome")).List(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("involvedObject.name", "rome").String()})
		if err != nil {
			return false, err
		}
		for _, e := range list.Items {
			if e.Reason == reason && strings.Contains(e.Message, ns) {
				t.Logf("%s: %s", e.Reason, e.Message)
				return true, nil
			}
		}
		return false, nil
	})
}
