package forge

import (
	corev1 "k8s.io/api/core/v1"
)

// The root CA ConfigMap every namespace gets from its own cluster: the
// remote cluster has one of the same name in the twin namespace, so the
// local one is reflected under another name, and offloaded pods mount that.
const (
	RootCAConfigMap       = "kube-root-ca.crt"
	RemoteRootCAConfigMap = "liqo-kube-root-ca.crt"
)

// RemoteConfigMapName is the name of a local ConfigMap's remote copy; ""
// when it has none (a local object named like the renamed root CA would
// collide with it).
func RemoteConfigMapName(local string) string {
	switch local {
	case RootCAConfigMap:
		return RemoteRootCAConfigMap
	case RemoteRootCAConfigMap:
		return ""
	}
	return local
}

// LocalConfigMapName inverts RemoteConfigMapName.
func LocalConfigMapName(remote string) string {
	if remote == RemoteRootCAConfigMap {
		return RootCAConfigMap
	}
	return remote
}

// ConfigMap is the remote copy of a local ConfigMap: verbatim, renamed
// by RemoteConfigMapName; nil when it has no remote name.
func ConfigMap(local *corev1.ConfigMap, remoteNamespace, localClusterID string) *corev1.ConfigMap {
	name := RemoteConfigMapName(local.Name)
	if name == "" {
		return nil
	}
	return &corev1.ConfigMap{
		ObjectMeta: RemoteMeta(&local.ObjectMeta, name, remoteNamespace, localClusterID),
		Data:       local.Data, BinaryData: local.BinaryData, Immutable: local.Immutable,
	}
}

// ConfigMapContent is what must match between a ConfigMap's wanted and
// actual remote copy, besides labels and annotations.
func ConfigMapContent(c *corev1.ConfigMap) any {
	return struct {
		Data      map[string]string
		Binary    map[string][]byte
		Immutable *bool
	}{c.Data, c.BinaryData, c.Immutable}
}

// Secret is the remote copy of a local Secret, verbatim; nil for the
// kinds that mean nothing remotely: legacy ServiceAccount token Secrets
// (the remote token controller would delete them; offloaded pods get
// their tokens through the token reflection instead).
func Secret(local *corev1.Secret, remoteNamespace, localClusterID string) *corev1.Secret {
	if local.Type == corev1.SecretTypeServiceAccountToken {
		return nil
	}
	return &corev1.Secret{
		ObjectMeta: RemoteMeta(&local.ObjectMeta, local.Name, remoteNamespace, localClusterID),
		Data:       local.Data, Type: local.Type, Immutable: local.Immutable,
	}
}

// SecretContent is what must match between a Secret's wanted and actual
// remote copy, besides labels and annotations.
func SecretContent(s *corev1.Secret) any {
	return struct {
		Data      map[string][]byte
		Type      corev1.SecretType
		Immutable *bool
	}{s.Data, s.Type, s.Immutable}
}
