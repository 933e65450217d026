package reflection

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
	"github.com/liqo-go/liqo/test/harness"
)

// startTokens runs a token reflection for the virtual node's pods, as a
// reflection would, refreshing its tokens after fraction of their life.
func startTokens(ctx context.Context, t *testing.T, fraction float64) *tokens {
	t.Helper()
	factory := informers.NewSharedInformerFactoryWithOptions(consumerCS, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", vnodeName).String()
		}))
	pods := factory.Core().V1().Pods()
	lister := pods.Lister()
	factory.Start(ctx.Done())
	if !toolscache.WaitForCacheSync(ctx.Done(), pods.Informer().HasSynced) {
		t.Fatal("the pod informer did not sync")
	}
	tk := newTokens(consumerCS, provider, listedPods{lister, pods.Informer().HasSynced}, consumerID, providerID, klog.Background(), tokenOptions{RefreshFraction: fraction})
	go tk.run(ctx)
	return tk
}

// listedPods are the pods of one node's lister, as a provider's
// reflection lists its nodes' pods.
type listedPods struct {
	lister corelisters.PodLister
	synced toolscache.InformerSynced
}

func (l listedPods) inNamespace(namespace string) ([]*corev1.Pod, bool) {
	pods, err := l.lister.Pods(namespace).List(labels.Everything())
	return pods, err == nil && l.synced()
}

// whoAmI is the user the consumer's API server takes token for, asked as
// an offloaded pod would: with the token and the CA of the root CA
// ConfigMap.
func whoAmI(ctx context.Context, namespace string, token []byte) (string, error) {
	ca, err := consumerCS.CoreV1().ConfigMaps(namespace).Get(ctx, forge.RootCAConfigMap, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	u := consumerCS.CoreV1().RESTClient().Get().URL()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: u.Scheme + "://" + u.Host, BearerToken: string(token),
		TLSClientConfig: rest.TLSClientConfig{CAData: []byte(ca.Data["ca.crt"])}})
	if err != nil {
		return "", err
	}
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return r.Status.UserInfo.Username, nil
}

func getSecret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	var s corev1.Secret
	err := provider.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &s)
	return &s, err
}

// TestTokens checks that an offloaded pod's projected token becomes a
// Secret on the provider holding a token of its local ServiceAccount, which the consumer's API server accepts, and which is
// refreshed before it expires (here after 1/3600 of its life: about a
// second of the kube-api-access token's hour).
func TestTokens(t *testing.T) {
	const ns, sa = "tokens", "default"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	twin := offload(ctx, t, ns)
	harness.Eventually(ctx, t, "the default ServiceAccount and root CA of "+ns, func() (bool, error) {
		_, err1 := consumerCS.CoreV1().ServiceAccounts(ns).Get(ctx, sa, metav1.GetOptions{})
		_, err2 := consumerCS.CoreV1().ConfigMaps(ns).Get(ctx, forge.RootCAConfigMap, metav1.GetOptions{})
		return err1 == nil && err2 == nil, client.IgnoreNotFound(errors.Join(err1, err2))
	})
	if err := consumer.Create(ctx, testPod(ns, "api")); err != nil {
		t.Fatal(err)
	}
	local, remote := waitRunning(ctx, t, ns, twin, "api")
	refs := forge.PodTokens(&local.Spec)
	if len(refs) != 1 || refs[0].ServiceAccount != sa {
		t.Fatalf("the local pod needs tokens %+v, want one of %s (its volumes: %+v)", refs, sa, local.Spec.Volumes)
	}
	secretName := forge.TokenSecretName(sa, "")

	// The token reflection under test is driven directly, in a provider
	// namespace of its own: the node's reflection (TestMain's) would also
	// keep the twin namespace's token Secrets once it runs one itself.
	secrets := twin + "-tokens"
	if err := provider.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: secrets}}); err != nil {
		t.Fatal(err)
	}
	tctx, stopTokens := context.WithCancel(ctx)
	tk := startTokens(tctx, t, 1.0/3600)
	if err := tk.ensure(ctx, local, secrets); err != nil {
		t.Fatal(err)
	}
	secret, err := getSecret(ctx, secrets, secretName)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("the remote pod mounts the token Secret", func(t *testing.T) {
		var sp offv1beta1.ShadowPod
		if err := provider.Get(ctx, types.NamespacedName{Namespace: twin, Name: "api"}, &sp); err != nil {
			t.Fatal(err)
		}
		for what, spec := range map[string]*corev1.PodSpec{"ShadowPod": &sp.Spec.Pod, "remote pod": &remote.Spec} {
			if !mountsTokenSecret(spec, secretName) {
				t.Errorf("the %s does not mount Secret %s with the token and the namespace: %+v", what, secretName, spec.Volumes)
			}
			if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
				t.Errorf("the %s gets the provider's token", what)
			}
		}
	})

	t.Run("the Secret authenticates as the local ServiceAccount", func(t *testing.T) {
		if !forge.Ours(secret, consumerID) || secret.Labels[forge.TokenLabel] != "true" {
			t.Errorf("Secret labels %v: want our marks and the token label", secret.Labels)
		}
		if string(secret.Data[forge.NamespaceKey]) != ns {
			t.Errorf("namespace key %q, want the local namespace %q", secret.Data[forge.NamespaceKey], ns)
		}
		if _, _, ok := forge.TokenLifetime(secret); !ok {
			t.Errorf("no token lifetime in the annotations %v", secret.Annotations)
		}
		user, err := whoAmI(ctx, ns, secret.Data[forge.TokenKey])
		if want := "system:serviceaccount:" + ns + ":" + sa; err != nil || user != want {
			t.Errorf("the token authenticates as %q (%v), want %q", user, err, want)
		}
	})

	t.Run("more pods of the account cost no TokenRequest", func(t *testing.T) {
		before, err := getSecret(ctx, secrets, secretName)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			p := local.DeepCopy()
			p.Name = fmt.Sprintf("replica-%d", i)
			if err := tk.ensure(ctx, p, secrets); err != nil {
				t.Fatal(err)
			}
		}
		after, err := getSecret(ctx, secrets, secretName)
		if err != nil {
			t.Fatal(err)
		}
		// The token may have been refreshed meanwhile, once.
		if n := tokenWrites(before, after); n > 1 {
			t.Errorf("the Secret was written for the new pods")
		}
	})

	t.Run("the token is refreshed and still authenticates", func(t *testing.T) {
		first := secret.Data[forge.TokenKey]
		harness.Eventually(ctx, t, "a new token in the Secret", func() (bool, error) {
			s, err := getSecret(ctx, secrets, secretName)
			if err != nil {
				return false, err
			}
			secret = s
			return !bytes.Equal(s.Data[forge.TokenKey], first), nil
		})
		user, err := whoAmI(ctx, ns, secret.Data[forge.TokenKey])
		if want := "system:serviceaccount:" + ns + ":" + sa; err != nil || user != want {
			t.Errorf("the new token authenticates as %q (%v), want %q", user, err, want)
		}
	})

	// A restart: a new token reflection that knows nothing plans the
	// refreshes of the Secrets it finds.
	stopTokens()
	tk = startTokens(ctx, t, 1.0/3600)

	t.Run("after a restart the refresh is planned again from the Secret", func(t *testing.T) {
		if err := tk.adopt(ctx, ns, secrets); err != nil {
			t.Fatal(err)
		}
		before, err := getSecret(ctx, secrets, secretName)
		if err != nil {
			t.Fatal(err)
		}
		harness.Eventually(ctx, t, "a new token in the Secret", func() (bool, error) {
			s, err := getSecret(ctx, secrets, secretName)
			return err == nil && !bytes.Equal(s.Data[forge.TokenKey], before.Data[forge.TokenKey]), err
		})
	})

	t.Run("a foreign Secret of the name is left alone and refuses the pod", func(t *testing.T) {
		foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: secrets, Name: forge.TokenSecretName("other", "")},
			StringData: map[string]string{"token": "not ours"}}
		if err := provider.Create(ctx, foreign); err != nil {
			t.Fatal(err)
		}
		p := local.DeepCopy()
		p.Spec.ServiceAccountName = "other"
		err := tk.ensure(ctx, p, secrets)
		var refused *tokenRefusal
		if !errors.As(err, &refused) || !strings.Contains(err.Error(), "not created by this cluster") {
			t.Errorf("ensure = %v, want a refusal naming the foreign Secret", err)
		}
		s, err := getSecret(ctx, secrets, foreign.Name)
		if err != nil || string(s.Data["token"]) != "not ours" || forge.Ours(s, consumerID) {
			t.Errorf("the foreign Secret was changed: %+v (%v)", s, err)
		}
	})

	t.Run("a missing ServiceAccount refuses the pod", func(t *testing.T) {
		p := local.DeepCopy()
		p.Spec.ServiceAccountName = "missing"
		var refused *tokenRefusal
		if err := tk.ensure(ctx, p, secrets); !errors.As(err, &refused) {
			t.Errorf("ensure = %v, want a refusal", err)
		}
		if _, err := getSecret(ctx, secrets, forge.TokenSecretName("missing", "")); !apierrors.IsNotFound(err) {
			t.Errorf("a Secret was written for a missing ServiceAccount (%v)", err)
		}
	})

	t.Run("a twin made again under its name gets its Secret written again", func(t *testing.T) {
		// An unoffloading deletes the twin namespace with its Secrets; an
		// EnforceSameName offloading makes it again under the same name.
		// The reflection forgets the twin when it stops: the next pod's
		// Secret is written, not assumed still there.
		if err := provider.Delete(ctx, secret); err != nil {
			t.Fatal(err)
		}
		tk.forget(secrets)
		if err := tk.ensure(ctx, local, secrets); err != nil {
			t.Fatal(err)
		}
		if _, err := getSecret(ctx, secrets, secretName); err != nil {
			t.Errorf("the token Secret after the twin was forgotten: %v", err)
		}
	})

	t.Run("the Secret goes with the last pod that needs it", func(t *testing.T) {
		if err := consumer.Delete(ctx, local); err != nil {
			t.Fatal(err)
		}
		harness.Eventually(ctx, t, "local pod gone", gone(ctx, consumer, &corev1.Pod{}, ns, "api"))
		harness.Eventually(ctx, t, "token Secret gone", gone(ctx, provider, &corev1.Secret{}, secrets, secretName))
		if _, err := getSecret(ctx, secrets, forge.TokenSecretName("other", "")); err != nil {
			t.Errorf("the foreign Secret: %v", err)
		}
	})
}

// mountsTokenSecret reports whether a remote pod spec mounts the token
// and the namespace from Secret name, and no ServiceAccount token.
func mountsTokenSecret(spec *corev1.PodSpec, name string) bool {
	for _, v := range spec.Volumes {
		if v.Projected == nil || !strings.HasPrefix(v.Name, "kube-api-access-") {
			continue
		}
		keys := map[string]bool{}
		for _, src := range v.Projected.Sources {
			if src.ServiceAccountToken != nil {
				return false
			}
			if src.Secret != nil && src.Secret.Name == name {
				for _, it := range src.Secret.Items {
					keys[it.Key+"→"+it.Path] = true
				}
			}
		}
		return keys[forge.TokenKey+"→token"] && keys[forge.NamespaceKey+"→namespace"]
	}
	return false
}

// tokenWrites counts how many times a Secret's token changed between two
// readings, as far as they tell: 0 or 1.
func tokenWrites(before, after *corev1.Secret) int {
	if before.ResourceVersion == after.ResourceVersion {
		return 0
	}
	if bytes.Equal(before.Data[forge.TokenKey], after.Data[forge.TokenKey]) {
		return 2 // written without a new token: a write for nothing
	}
	return 1
}
