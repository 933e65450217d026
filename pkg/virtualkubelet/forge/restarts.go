package forge

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// RestartBaseAnnotation, on a local pod, holds the restarts its containers
// had before the provider's current pod: per container name, the restart
// count the local pod showed when the provider re-created its pod (a
// ShadowPod's pod deleted or evicted and made again), plus one for the
// re-creation itself, as "name=count,name=count". The local restart count
// is this base plus the provider's pod's own, so it keeps counting up
// across re-creations instead of dropping to 0, as a kubelet's does across
// container restarts. It is written only when a re-creation is seen; a
// pod that was never re-created has none.
const RestartBaseAnnotation = "liqo.io/restart-base"

// RestartBase reads a local pod's RestartBaseAnnotation; entries that do
// not parse (a user may edit the annotation) count as 0.
func RestartBase(annotations map[string]string) map[string]int32 {
	v := annotations[RestartBaseAnnotation]
	if v == "" {
		return nil
	}
	base := map[string]int32{}
	for _, entry := range strings.Split(v, ",") {
		name, count, ok := strings.Cut(entry, "=")
		n, err := strconv.ParseInt(count, 10, 32)
		if ok && name != "" && err == nil && n > 0 {
			base[name] = int32(n)
		}
	}
	return base
}

// FormatRestartBase is the RestartBaseAnnotation value of base, sorted by
// container name.
func FormatRestartBase(base map[string]int32) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(base)) {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(name + "=" + strconv.FormatInt(int64(base[name]), 10))
	}
	return b.String()
}

// Recreated tells whether the provider's pod (remote) is not the one the
// local status was reflected from: it started at another time (a pod's
// start time never changes while it lives), has not started while the
// local status shows a start, or one of its containers counts fewer
// restarts than the local pod already shows with base, which only a new
// pod does.
func Recreated(local, remote *corev1.PodStatus, base map[string]int32) bool {
	if local.StartTime != nil && (remote.StartTime == nil || !remote.StartTime.Equal(local.StartTime)) {
		return true
	}
	remoteCounts := restartCounts(remote)
	for name, shown := range restartCounts(local) {
		if base[name]+remoteCounts[name] < shown {
			return true
		}
	}
	return false
}

// NextRestartBase is the base once the provider re-created the pod: each
// container's restarts as the local pod shows them, plus one for the
// container made again.
func NextRestartBase(local *corev1.PodStatus, base map[string]int32) map[string]int32 {
	next := maps.Clone(base)
	if next == nil {
		next = map[string]int32{}
	}
	for name, shown := range restartCounts(local) {
		next[name] = max(shown, base[name]) + 1
	}
	return next
}

// withRestartBase adds base to the restart counts of s's containers.
func withRestartBase(s *corev1.PodStatus, base map[string]int32) {
	for _, list := range [][]corev1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses} {
		for i := range list {
			list[i].RestartCount += base[list[i].Name]
		}
	}
}

// restartCounts are the restart counts of a status's init and regular
// containers, by name (unique across both in a pod).
func restartCounts(s *corev1.PodStatus) map[string]int32 {
	counts := map[string]int32{}
	for _, list := range [][]corev1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses} {
		for _, c := range list {
			counts[c.Name] = c.RestartCount
		}
	}
	return counts
}
