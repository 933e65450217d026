package reflection

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
	"github.com/liqo-go/liqo/test/harness"
)

// waitFor polls the provider until the object named key satisfies cond
// (nil: exists) and returns it.
func waitFor[T any, P interface {
	*T
	client.Object
}](ctx context.Context, t *testing.T, what string, key types.NamespacedName, cond func(P) bool) P {
	t.Helper()
	obj := P(new(T))
	harness.Eventually(ctx, t, what, func() (bool, error) {
		if err := provider.Get(ctx, key, obj); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return cond == nil || cond(obj), nil
	})
	return obj
}

func TestConfigMaps(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	twin := offload(ctx, t, "configs")
	at := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: twin, Name: name} }

	t.Run("the root CA is reflected under another name", func(t *testing.T) {
		var local corev1.ConfigMap
		harness.Eventually(ctx, t, "the local root CA ConfigMap", func() (bool, error) {
			return client.IgnoreNotFound(consumer.Get(ctx, types.NamespacedName{Namespace: "configs", Name: forge.RootCAConfigMap}, &local)) == nil &&
				local.Name != "", nil
		})
		remote := waitFor(ctx, t, "the renamed root CA", at(forge.RemoteRootCAConfigMap), func(c *corev1.ConfigMap) bool {
			return c.Data["ca.crt"] == local.Data["ca.crt"]
		})
		if !forge.Ours(remote, consumerID) {
			t.Errorf("the root CA copy lacks our marks: %v", remote.Labels)
		}
		var own corev1.ConfigMap
		if err := provider.Get(ctx, at(forge.RootCAConfigMap), &own); err == nil && own.Data["ca.crt"] == local.Data["ca.crt"] {
			t.Errorf("the provider's own root CA ConfigMap was overwritten with the consumer's")
		}
	})

	t.Run("create, update, revert, delete", func(t *testing.T) {
		local := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "configs", Labels: map[string]string{"app": "web"}},
			Data: map[string]string{"level": "debug"}}
		if err := consumer.Create(ctx, local); err != nil {
			t.Fatal(err)
		}
		remote := waitFor(ctx, t, "the copy", at("settings"), func(c *corev1.ConfigMap) bool { return c.Data["level"] == "debug" })
		if remote.Labels["app"] != "web" || !forge.Ours(remote, consumerID) {
			t.Errorf("copy labels = %v", remote.Labels)
		}

		local.Data["level"] = "info"
		start := time.Now()
		if err := consumer.Update(ctx, local); err != nil {
			t.Fatal(err)
		}
		waitFor(ctx, t, "the update mirrored", at("settings"), func(c *corev1.ConfigMap) bool { return c.Data["level"] == "info" })
		t.Logf("update mirrored after %v", time.Since(start))

		remote.Data = map[string]string{"level": "hacked"}
		remote.ResourceVersion = ""
		if err := provider.Update(ctx, remote); err != nil {
			t.Fatal(err)
		}
		waitFor(ctx, t, "the remote edit reverted", at("settings"), func(c *corev1.ConfigMap) bool { return c.Data["level"] == "info" })

		start = time.Now()
		if err := consumer.Delete(ctx, local); err != nil {
			t.Fatal(err)
		}
		harness.Eventually(ctx, t, "the copy deleted", gone(ctx, provider, &corev1.ConfigMap{}, twin, "settings"))
		t.Logf("deletion mirrored after %v", time.Since(start))
	})

	t.Run("an object we did not create is left alone", func(t *testing.T) {
		theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "taken", Namespace: twin}, Data: map[string]string{"owner": "provider"}}
		if err := provider.Create(ctx, theirs); err != nil {
			t.Fatal(err)
		}
		if err := consumer.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "taken", Namespace: "configs"},
			Data: map[string]string{"owner": "consumer"}}); err != nil {
			t.Fatal(err)
		}
		harness.Eventually(ctx, t, "a ReflectionConflict event", func() (bool, error) {
			var events corev1.EventList
			err := consumer.List(ctx, &events, client.InNamespace("configs"),
				client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("involvedObject.name", "taken")})
			for _, e := range events.Items {
				if e.Reason == forge.ReasonReflectionConflict {
					return true, nil
				}
			}
			return false, err
		})
		var got corev1.ConfigMap
		if err := provider.Get(ctx, at("taken"), &got); err != nil || got.Data["owner"] != "provider" || forge.Ours(&got, consumerID) {
			t.Errorf("the provider's ConfigMap was touched: %v %v", got.Data, err)
		}
		// Removing the local object must not remove theirs either.
		if err := consumer.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "taken", Namespace: "configs"}}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		if err := provider.Get(ctx, at("taken"), &got); err != nil {
			t.Errorf("the provider's ConfigMap is gone: %v", err)
		}
	})

	t.Run("opted out objects stay local", func(t *testing.T) {
		for _, cm := range []*corev1.ConfigMap{
			{ObjectMeta: metav1.ObjectMeta{Name: "private", Namespace: "configs", Annotations: map[string]string{forge.SkipReflectionAnnotation: "true"}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "public", Namespace: "configs"}},
		} {
			if err := consumer.Create(ctx, cm); err != nil {
				t.Fatal(err)
			}
		}
		waitFor[corev1.ConfigMap](ctx, t, "the public ConfigMap", at("public"), nil)
		if err := provider.Get(ctx, at("private"), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			t.Errorf("the opted-out ConfigMap was reflected (err %v)", err)
		}
	})

	if n := testutil.ToFloat64(reflectedObjects.WithLabelValues(providerID, ConfigMaps)); n < 2 {
		t.Errorf("liqo_reflection_objects{kind=configmaps} = %v, want at least the root CA and the public ConfigMap", n)
	}
	// What the controller manager's metrics endpoint serves.
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, f := range families {
		if _, err := expfmt.MetricFamilyToText(&text, f); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{
		`liqo_reflection_objects{kind="configmaps",provider="` + providerID + `"}`,
		`liqo_reflection_operations_total{kind="configmaps",operation="update",provider="` + providerID + `"}`,
		`workqueue_depth{controller="reflection-configmaps-` + providerID + `",name="reflection-configmaps-` + providerID + `"`,
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the metrics lack %s", want)
		}
	}
}

func TestSecretsServicesIngresses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	twin := offload(ctx, t, "exposed")
	at := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: twin, Name: name} }

	t.Run("secrets verbatim", func(t *testing.T) {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "exposed"},
			Type: corev1.SecretTypeBasicAuth, Data: map[string][]byte{"username": []byte("admin"), "password": []byte("s3cret")}}
		if err := consumer.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		got := waitFor(ctx, t, "the Secret copy", at("creds"), func(r *corev1.Secret) bool { return string(r.Data["password"]) == "s3cret" })
		if got.Type != corev1.SecretTypeBasicAuth {
			t.Errorf("type = %s", got.Type)
		}

		s.Data["password"] = []byte("rotated")
		if err := consumer.Update(ctx, s); err != nil {
			t.Fatal(err)
		}
		waitFor(ctx, t, "the rotated password mirrored", at("creds"), func(r *corev1.Secret) bool { return string(r.Data["password"]) == "rotated" })
		if err := consumer.Delete(ctx, s); err != nil {
			t.Fatal(err)
		}
		harness.Eventually(ctx, t, "the Secret copy deleted", gone(ctx, provider, &corev1.Secret{}, twin, "creds"))
	})

	t.Run("services without cluster-assigned fields", func(t *testing.T) {
		web := service("web", corev1.ServiceTypeNodePort, nil)
		pinned := service("pinned", corev1.ServiceTypeNodePort, map[string]string{forge.ForceRemoteNodePortAnnotation: "true"})
		for _, s := range []*corev1.Service{web, pinned} {
			if err := consumer.Create(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		remote := waitFor[corev1.Service](ctx, t, "the Service copy", at("web"), nil)
		if remote.Spec.ClusterIP == "" || remote.Spec.Ports[0].NodePort == 0 {
			t.Errorf("the provider did not assign its own cluster IP and node port: %+v", remote.Spec)
		}
		if !maps.Equal(remote.Spec.Selector, web.Spec.Selector) || remote.Spec.Type != corev1.ServiceTypeNodePort {
			t.Errorf("copy spec = %+v", remote.Spec)
		}
		remotePinned := waitFor[corev1.Service](ctx, t, "the pinned Service copy", at("pinned"), nil)
		if remotePinned.Spec.Ports[0].NodePort != pinned.Spec.Ports[0].NodePort {
			t.Errorf("node port %d, want the local %d kept", remotePinned.Spec.Ports[0].NodePort, pinned.Spec.Ports[0].NodePort)
		}

		// An update keeps the remote cluster's assignments.
		web.Spec.Ports = append(web.Spec.Ports, corev1.ServicePort{Name: "metrics", Port: 9090, Protocol: corev1.ProtocolTCP})
		if err := consumer.Update(ctx, web); err != nil {
			t.Fatal(err)
		}
		updated := waitFor(ctx, t, "the port added remotely", at("web"), func(s *corev1.Service) bool { return len(s.Spec.Ports) == 2 })
		if updated.Spec.ClusterIP != remote.Spec.ClusterIP || updated.Spec.Ports[0].NodePort != remote.Spec.Ports[0].NodePort {
			t.Errorf("the update changed the remote assignments: %s/%d → %s/%d", remote.Spec.ClusterIP, remote.Spec.Ports[0].NodePort,
				updated.Spec.ClusterIP, updated.Spec.Ports[0].NodePort)
		}
		if err := consumer.Delete(ctx, web); err != nil {
			t.Fatal(err)
		}
		harness.Eventually(ctx, t, "the Service copy deleted", gone(ctx, provider, &corev1.Service{}, twin, "web"))
	})

	t.Run("ingresses without their class", func(t *testing.T) {
		pt := networkingv1.PathTypePrefix
		ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "front", Namespace: "exposed"},
			Spec: networkingv1.IngressSpec{IngressClassName: ptr.To("nginx"), Rules: []networkingv1.IngressRule{{Host: "shop.example.com",
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
					Path: "/", PathType: &pt, Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
						Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}}}
		if err := consumer.Create(ctx, ing); err != nil {
			t.Fatal(err)
		}
		got := waitFor[networkingv1.Ingress](ctx, t, "the Ingress copy", at("front"), nil)
		if got.Spec.IngressClassName != nil || len(got.Spec.Rules) != 1 || got.Spec.Rules[0].Host != "shop.example.com" {
			t.Errorf("copy spec = %+v", got.Spec)
		}
	})
}

func service(name string, typ corev1.ServiceType, annotations map[string]string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "exposed", Annotations: annotations},
		Spec: corev1.ServiceSpec{Type: typ, Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}},
	}
}
