package forge

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// An offloaded pod that mounts a projected ServiceAccount token gets, in
// its place, a Secret in the twin namespace holding a token of its local
// ServiceAccount for the same audience, obtained through the local
// TokenRequest API and refreshed before it expires. One Secret serves
// every pod of a ServiceAccount and audience.
const (
	// TokenLabel (value "true") marks the remote Secrets holding tokens,
	// besides the marks of RemoteMeta: the resource reflectors must leave
	// them alone.
	TokenLabel = "offloading.liqo.io/service-account-token"
	// TokenServiceAccountAnnotation and TokenAudienceAnnotation say whose
	// token a Secret holds, so that one named alike for another account
	// (TokenSecretName hashes) is never taken for it.
	TokenServiceAccountAnnotation = "offloading.liqo.io/service-account"
	TokenAudienceAnnotation       = "offloading.liqo.io/token-audience"
	// TokenIssuedAnnotation and TokenExpiryAnnotation (RFC 3339) date the
	// token, so that its refresh is planned again after a restart.
	TokenIssuedAnnotation = "offloading.liqo.io/token-issued-at"
	TokenExpiryAnnotation = "offloading.liqo.io/token-expiry"

	// TokenKey holds the token; NamespaceKey the pod's local namespace,
	// which the token volume's downward API item would otherwise give as
	// the twin namespace's name.
	TokenKey     = "token"
	NamespaceKey = "namespace"

	tokenSecretPrefix = "liqo-token-"
	// MinTokenExpirationSeconds is the shortest token the TokenRequest API
	// issues; DefaultTokenExpirationSeconds the one it issues when a
	// projection names no expiration.
	MinTokenExpirationSeconds     = 600
	DefaultTokenExpirationSeconds = 3600
)

// TokenRef is one ServiceAccount token that offloaded pods need.
type TokenRef struct {
	ServiceAccount string
	// Audience is "" for the API server's own audience.
	Audience string
	// ExpirationSeconds is the lifetime to request: the shortest that
	// any projection asks for, at least the API's minimum.
	ExpirationSeconds int64
}

// SecretName is the name of the remote Secret holding the token.
func (r TokenRef) SecretName() string { return TokenSecretName(r.ServiceAccount, r.Audience) }

// TokenSecretName is the name of the remote Secret holding the tokens of
// a ServiceAccount for an audience: liqo-token-<account> for the API
// server's audience, with a hash of the audience for others, and cut to
// fit the 253 characters of a name (a hash then says what was cut).
func TokenSecretName(serviceAccount, audience string) string {
	name := tokenSecretPrefix + serviceAccount
	if audience == "" && len(name) <= validation.DNS1123SubdomainMaxLength {
		return name
	}
	sum := sha256.Sum256([]byte(serviceAccount + "\x00" + audience))
	suffix := "-" + hex.EncodeToString(sum[:])[:10]
	if limit := validation.DNS1123SubdomainMaxLength - len(suffix); len(name) > limit {
		// A label may not end with '-' or '.', nor the next start with one.
		name = strings.TrimRight(name[:limit], "-.")
	}
	return name + suffix
}

// IsTokenSecretName reports whether a Secret name may be one of the token
// Secrets: a local Secret named so must not be copied to the twin
// namespace, where it would collide with them.
func IsTokenSecretName(name string) bool { return strings.HasPrefix(name, tokenSecretPrefix) }

// RemoteSecretName is the name of a local Secret's remote copy, for the
// Secret reflector: its own, or "" (no copy) for a name the token Secrets
// may have. The reflector thus neither copies a local Secret over a token
// Secret nor deletes a token Secret for having no local counterpart.
func RemoteSecretName(local string) string {
	if IsTokenSecretName(local) {
		return ""
	}
	return local
}

// PodTokens lists the tokens a local pod's projected volumes need, one
// per audience, for the pod's ServiceAccount.
func PodTokens(local *corev1.PodSpec) []TokenRef {
	var refs []TokenRef
	sa := serviceAccountOf(local)
	for _, v := range local.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			if src.ServiceAccountToken == nil {
				continue
			}
			exp := int64(DefaultTokenExpirationSeconds)
			if e := src.ServiceAccountToken.ExpirationSeconds; e != nil {
				exp = max(*e, MinTokenExpirationSeconds)
			}
			found := false
			for i := range refs {
				if refs[i].Audience == src.ServiceAccountToken.Audience {
					refs[i].ExpirationSeconds = min(refs[i].ExpirationSeconds, exp)
					found = true
				}
			}
			if !found {
				refs = append(refs, TokenRef{ServiceAccount: sa, Audience: src.ServiceAccountToken.Audience, ExpirationSeconds: exp})
			}
		}
	}
	return refs
}

// TokenFields is the part of a pod spec PodTokens reads: the
// ServiceAccount and the projected volumes' token sources. PodTokens gives
// the same for it as for the whole spec, so a cache may keep a pod with
// only these once nothing else of its spec will be read.
func TokenFields(s *corev1.PodSpec) corev1.PodSpec {
	out := corev1.PodSpec{ServiceAccountName: s.ServiceAccountName, DeprecatedServiceAccount: s.DeprecatedServiceAccount}
	for _, v := range s.Volumes {
		if v.Projected == nil {
			continue
		}
		var tokens []corev1.VolumeProjection
		for _, src := range v.Projected.Sources {
			if src.ServiceAccountToken != nil {
				tokens = append(tokens, corev1.VolumeProjection{ServiceAccountToken: src.ServiceAccountToken})
			}
		}
		if tokens != nil {
			out.Volumes = append(out.Volumes, corev1.Volume{Name: v.Name,
				VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: tokens}}})
		}
	}
	return out
}

func serviceAccountOf(s *corev1.PodSpec) string {
	switch {
	case s.ServiceAccountName != "":
		return s.ServiceAccountName
	case s.DeprecatedServiceAccount != "":
		return s.DeprecatedServiceAccount
	}
	return "default"
}

// TokenSecret is the remote Secret holding a token of ref for the pods of
// localNamespace, issued at issued and valid until expiry.
func TokenSecret(ref TokenRef, localNamespace, remoteNamespace, localClusterID string, token []byte, issued, expiry time.Time) *corev1.Secret {
	meta := RemoteMeta(&metav1.ObjectMeta{}, ref.SecretName(), remoteNamespace, localClusterID)
	meta.Labels[TokenLabel] = "true"
	meta.Annotations = map[string]string{
		TokenServiceAccountAnnotation: ref.ServiceAccount,
		TokenAudienceAnnotation:       ref.Audience,
		TokenIssuedAnnotation:         issued.UTC().Format(time.RFC3339),
		TokenExpiryAnnotation:         expiry.UTC().Format(time.RFC3339),
	}
	return &corev1.Secret{
		ObjectMeta: meta,
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{TokenKey: token, NamespaceKey: []byte(localNamespace)},
	}
}

// IsTokenSecret reports whether a remote Secret is a token Secret of
// localClusterID's for ref: only such a Secret is ever updated or deleted.
func IsTokenSecret(s *corev1.Secret, ref TokenRef, localClusterID string) bool {
	return Ours(s, localClusterID) && s.Labels[TokenLabel] == "true" &&
		s.Annotations[TokenServiceAccountAnnotation] == ref.ServiceAccount && s.Annotations[TokenAudienceAnnotation] == ref.Audience
}

// TokenLifetime reads when a token Secret's token was issued and when it
// expires; ok is false when the annotations are missing or malformed.
func TokenLifetime(s *corev1.Secret) (issued, expiry time.Time, ok bool) {
	issued, err1 := time.Parse(time.RFC3339, s.Annotations[TokenIssuedAnnotation])
	expiry, err2 := time.Parse(time.RFC3339, s.Annotations[TokenExpiryAnnotation])
	return issued, expiry, err1 == nil && err2 == nil && expiry.After(issued)
}

// RefreshTime is when a token valid from issued to expiry is replaced:
// after fraction of its lifetime.
func RefreshTime(issued, expiry time.Time, fraction float64) time.Time {
	return issued.Add(time.Duration(fraction * float64(expiry.Sub(issued))))
}

// remoteTokenVolumes rewrites a remote pod spec's ServiceAccount token
// projections into sources of the token Secrets, and its references to the
// local root CA ConfigMap into references to its remote copy.
func remoteTokenVolumes(s *corev1.PodSpec, serviceAccount string) {
	for i := range s.Volumes {
		v := &s.Volumes[i]
		switch {
		case v.ConfigMap != nil:
			v.ConfigMap.Name = remoteCAName(v.ConfigMap.Name)
		case v.Projected != nil:
			v.Projected.Sources = remoteProjection(v.Projected.Sources, serviceAccount)
		}
	}
	for _, cs := range [][]corev1.Container{s.InitContainers, s.Containers} {
		for i := range cs {
			for j := range cs[i].Env {
				if ref := cs[i].Env[j].ValueFrom; ref != nil && ref.ConfigMapKeyRef != nil {
					ref.ConfigMapKeyRef.Name = remoteCAName(ref.ConfigMapKeyRef.Name)
				}
			}
			for j := range cs[i].EnvFrom {
				if ref := cs[i].EnvFrom[j].ConfigMapRef; ref != nil {
					ref.Name = remoteCAName(ref.Name)
				}
			}
		}
	}
}

// remoteProjection rewrites the sources of one projected volume. In a
// volume with a token, the downward API's metadata.namespace items are
// served from the first token Secret's namespace key: the pod's namespace
// is the local one, whatever the twin is called.
func remoteProjection(sources []corev1.VolumeProjection, serviceAccount string) []corev1.VolumeProjection {
	hasToken := false
	for _, src := range sources {
		hasToken = hasToken || src.ServiceAccountToken != nil
	}
	out := make([]corev1.VolumeProjection, 0, len(sources))
	firstToken := -1
	var namespaceItems []corev1.KeyToPath
	for _, src := range sources {
		switch {
		case src.ServiceAccountToken != nil:
			tok := src.ServiceAccountToken
			src = corev1.VolumeProjection{Secret: &corev1.SecretProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: TokenSecretName(serviceAccount, tok.Audience)},
				Items:                []corev1.KeyToPath{{Key: TokenKey, Path: tok.Path}},
			}}
			if firstToken < 0 {
				firstToken = len(out)
			}
		case src.ConfigMap != nil:
			src.ConfigMap.Name = remoteCAName(src.ConfigMap.Name)
		case src.DownwardAPI != nil && hasToken:
			var keep []corev1.DownwardAPIVolumeFile
			for _, it := range src.DownwardAPI.Items {
				if it.FieldRef != nil && it.FieldRef.FieldPath == "metadata.namespace" {
					namespaceItems = append(namespaceItems, corev1.KeyToPath{Key: NamespaceKey, Path: it.Path, Mode: it.Mode})
				} else {
					keep = append(keep, it)
				}
			}
			if len(keep) == 0 {
				continue
			}
			src.DownwardAPI.Items = keep
		}
		out = append(out, src)
	}
	if len(namespaceItems) > 0 {
		out[firstToken].Secret.Items = append(out[firstToken].Secret.Items, namespaceItems...)
	}
	return out
}

func remoteCAName(name string) string {
	if name == RootCAConfigMap {
		return RemoteRootCAConfigMap
	}
	return name
}
