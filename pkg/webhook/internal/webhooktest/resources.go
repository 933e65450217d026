package webhooktest

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// List is the resource list of kv's name, amount pairs.
func List(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

// Container is a container asking requests and limits.
func Container(requests, limits corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}
}
