package forge

import (
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/liqo-go/liqo/pkg/consts"
)

// kubeAPIAccess is the projected volume the ServiceAccount admission adds
// to every pod.
func kubeAPIAccess() *corev1.ProjectedVolumeSource {
	return &corev1.ProjectedVolumeSource{DefaultMode: ptr.To[int32](0o644), Sources: []corev1.VolumeProjection{
		{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr.To[int64](3607), Path: "token"}},
		{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: RootCAConfigMap},
			Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
		{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
	}}
}

func secretSource(name string, items ...corev1.KeyToPath) corev1.VolumeProjection {
	return corev1.VolumeProjection{Secret: &corev1.SecretProjection{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Items: items}}
}

func TestRemoteTokenVolumes(t *testing.T) {
	labels := &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
		{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}
	cases := []struct {
		name    string
		sa      string
		volumes []corev1.Volume
		env     []corev1.EnvVar
		envFrom []corev1.EnvFromSource
		want    []corev1.Volume
		wantEnv []corev1.EnvVar
		wantEF  []corev1.EnvFromSource
	}{
		{
			name:    "the default kube-api-access volume",
			sa:      "builder",
			volumes: []corev1.Volume{{Name: "kube-api-access-x", VolumeSource: corev1.VolumeSource{Projected: kubeAPIAccess()}}},
			want: []corev1.Volume{{Name: "kube-api-access-x", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				DefaultMode: ptr.To[int32](0o644), Sources: []corev1.VolumeProjection{
					secretSource("liqo-token-builder", corev1.KeyToPath{Key: TokenKey, Path: "token"},
						corev1.KeyToPath{Key: NamespaceKey, Path: "namespace"}),
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: RemoteRootCAConfigMap},
						Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
				}}}}},
		},
		{
			name: "a token for another audience; other downward items stay; namespace from the first token",
			sa:   "default",
			volumes: []corev1.Volume{{Name: "vault", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
					{Path: "ns", Mode: ptr.To[int32](0o400), FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}},
					{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}},
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: "vault", ExpirationSeconds: ptr.To[int64](600), Path: "vault-token"}},
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
			}}}}},
			want: []corev1.Volume{{Name: "vault", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{DownwardAPI: labels},
				secretSource(TokenSecretName("default", "vault"), corev1.KeyToPath{Key: TokenKey, Path: "vault-token"},
					corev1.KeyToPath{Key: NamespaceKey, Path: "ns", Mode: ptr.To[int32](0o400)}),
				secretSource("liqo-token-default", corev1.KeyToPath{Key: TokenKey, Path: "token"}),
			}}}}},
		},
		{
			name: "a projection without a token keeps its downward namespace",
			sa:   "default",
			volumes: []corev1.Volume{{Name: "info", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
					{Path: "ns", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}},
			}}}}},
			want: []corev1.Volume{{Name: "info", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
					{Path: "ns", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}},
			}}}}},
		},
		{
			name: "root CA ConfigMap volume and env references renamed, others kept",
			sa:   "default",
			volumes: []corev1.Volume{
				{Name: "ca", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: RootCAConfigMap}}}},
				{Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "conf"}}}},
			},
			env: []corev1.EnvVar{
				{Name: "CA", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: RootCAConfigMap}, Key: "ca.crt"}}},
				{Name: "X", Value: "1"},
			},
			envFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: RootCAConfigMap}}},
				{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "conf"}}}},
			want: []corev1.Volume{
				{Name: "ca", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: RemoteRootCAConfigMap}}}},
				{Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "conf"}}}},
			},
			wantEnv: []corev1.EnvVar{
				{Name: "CA", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: RemoteRootCAConfigMap}, Key: "ca.crt"}}},
				{Name: "X", Value: "1"},
			},
			wantEF: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: RemoteRootCAConfigMap}}},
				{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "conf"}}}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			local := &corev1.PodSpec{ServiceAccountName: c.sa, Volumes: c.volumes,
				InitContainers: []corev1.Container{{Name: "init", Env: c.env, EnvFrom: c.envFrom}},
				Containers:     []corev1.Container{{Name: "app", Env: c.env, EnvFrom: c.envFrom}}}
			before := local.DeepCopy()
			got := RemotePodSpec(local)
			if !reflect.DeepEqual(got.Volumes, c.want) {
				t.Errorf("volumes:\n got %+v\nwant %+v", got.Volumes, c.want)
			}
			for _, ctr := range append(got.InitContainers, got.Containers...) {
				if !reflect.DeepEqual(ctr.Env, c.wantEnv) || !reflect.DeepEqual(ctr.EnvFrom, c.wantEF) {
					t.Errorf("container %s env %+v / %+v, want %+v / %+v", ctr.Name, ctr.Env, ctr.EnvFrom, c.wantEnv, c.wantEF)
				}
			}
			if got.ServiceAccountName != "" || got.AutomountServiceAccountToken == nil || *got.AutomountServiceAccountToken {
				t.Errorf("remote pod with service account %q, automount %v: want neither", got.ServiceAccountName, got.AutomountServiceAccountToken)
			}
			if !reflect.DeepEqual(local, before) {
				t.Errorf("the local spec was modified")
			}
		})
	}
}

func TestTokenSecretName(t *testing.T) {
	long := strings.Repeat("a", 240) + "." + strings.Repeat("b", 12)
	cases := []struct {
		name, sa, audience, want string
	}{
		{name: "default audience", sa: "default", want: "liqo-token-default"},
		{name: "other audience", sa: "default", audience: "vault", want: "liqo-token-default-"},
		{name: "long account, default audience", sa: long, want: "liqo-token-aaaa"},
		{name: "long account, other audience", sa: long, audience: "vault", want: "liqo-token-aaaa"},
		{name: "cut at a dot", sa: strings.Repeat("a", 230) + "." + strings.Repeat("b", 22), want: "liqo-token-aaaa"},
	}
	if RemoteSecretName("db-password") != "db-password" {
		t.Errorf("a user's Secret is renamed remotely")
	}
	seen := map[string]string{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := TokenSecretName(c.sa, c.audience)
			if !strings.HasPrefix(got, c.want) || (c.audience == "" && len(c.sa) < 100 && got != c.want) {
				t.Errorf("TokenSecretName(%q, %q) = %q, want %q...", c.sa, c.audience, got, c.want)
			}
			if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
				t.Errorf("%q is not a valid name: %v", got, errs)
			}
			if !IsTokenSecretName(got) || RemoteSecretName(got) != "" {
				t.Errorf("%q is not recognized as a token Secret's name", got)
			}
			if other, ok := seen[got]; ok {
				t.Errorf("%q names the Secret of %s too", got, other)
			}
			seen[got] = c.name
			if TokenSecretName(c.sa, c.audience) != got {
				t.Errorf("TokenSecretName is not stable")
			}
		})
	}
}

func TestPodTokens(t *testing.T) {
	tok := func(aud string, exp *int64) corev1.VolumeProjection {
		return corev1.VolumeProjection{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: aud, ExpirationSeconds: exp, Path: "t"}}
	}
	projected := func(srcs ...corev1.VolumeProjection) corev1.Volume {
		return corev1.Volume{VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: srcs}}}
	}
	cases := []struct {
		name string
		spec corev1.PodSpec
		want []TokenRef
	}{
		{name: "no token", spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "data"}}}},
		{name: "kube-api-access of the default account",
			spec: corev1.PodSpec{Volumes: []corev1.Volume{{VolumeSource: corev1.VolumeSource{Projected: kubeAPIAccess()}}}},
			want: []TokenRef{{ServiceAccount: "default", ExpirationSeconds: 3607}}},
		{name: "one per audience, the shortest expiration, at least the minimum",
			spec: corev1.PodSpec{ServiceAccountName: "app", Volumes: []corev1.Volume{
				projected(tok("", nil), tok("vault", ptr.To[int64](7200))),
				projected(tok("vault", ptr.To[int64](100)), tok("", ptr.To[int64](1800))),
			}},
			want: []TokenRef{{ServiceAccount: "app", ExpirationSeconds: 1800}, {ServiceAccount: "app", Audience: "vault", ExpirationSeconds: 600}}},
		{name: "deprecated account field",
			spec: corev1.PodSpec{DeprecatedServiceAccount: "old", Volumes: []corev1.Volume{projected(tok("", nil))}},
			want: []TokenRef{{ServiceAccount: "old", ExpirationSeconds: 3600}}},
	}
	for _, c := range cases {
		if got := PodTokens(&c.spec); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
		// What a cache keeps of a reflected pod gives the same tokens, and
		// holds no other volume.
		kept := TokenFields(&c.spec)
		if got := PodTokens(&kept); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: TokenFields: got %+v, want %+v", c.name, got, c.want)
		}
		for _, v := range kept.Volumes {
			for _, src := range v.Projected.Sources {
				if src.ServiceAccountToken == nil {
					t.Errorf("%s: TokenFields kept %+v", c.name, src)
				}
			}
		}
	}
}

func TestTokenSecret(t *testing.T) {
	issued := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	expiry := issued.Add(time.Hour)
	ref := TokenRef{ServiceAccount: "app", Audience: "vault", ExpirationSeconds: 3600}
	s := TokenSecret(ref, "shop", "shop-rome", "rome", []byte("tok"), issued, expiry)
	switch {
	case s.Name != TokenSecretName("app", "vault") || s.Namespace != "shop-rome":
		t.Errorf("name %s/%s", s.Namespace, s.Name)
	case string(s.Data[TokenKey]) != "tok" || string(s.Data[NamespaceKey]) != "shop" || s.Type != corev1.SecretTypeOpaque:
		t.Errorf("data %v type %s", s.Data, s.Type)
	case s.Labels[consts.ManagedByLabel] != consts.ManagedByValue || s.Labels[consts.OriginClusterIDLabel] != "rome" || s.Labels[TokenLabel] != "true":
		t.Errorf("labels %v", s.Labels)
	case !IsTokenSecret(s, ref, "rome"):
		t.Errorf("IsTokenSecret is false for its own Secret")
	case IsTokenSecret(s, ref, "naples"), IsTokenSecret(s, TokenRef{ServiceAccount: "app"}, "rome"):
		t.Errorf("IsTokenSecret is true for another cluster or audience")
	}
	gotIssued, gotExpiry, ok := TokenLifetime(s)
	if !ok || !gotIssued.Equal(issued) || !gotExpiry.Equal(expiry) {
		t.Errorf("TokenLifetime = %v %v %v", gotIssued, gotExpiry, ok)
	}
	if at := RefreshTime(gotIssued, gotExpiry, 0.8); !at.Equal(issued.Add(48 * time.Minute)) {
		t.Errorf("refresh at %v, want 80%% of the hour", at)
	}
	foreign := s.DeepCopy()
	delete(foreign.Labels, TokenLabel)
	if IsTokenSecret(foreign, ref, "rome") {
		t.Errorf("a reflected Secret without the token label counts as a token Secret")
	}
	if _, _, ok := TokenLifetime(&corev1.Secret{}); ok {
		t.Errorf("a Secret without dates has a lifetime")
	}
}
