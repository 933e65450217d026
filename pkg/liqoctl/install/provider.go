package install

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Providers are the kinds of cluster liqoctl install knows how to read the
// networks of.
var Providers = []string{"generic", "kubeadm", "kind", "k3s", "openshift", "aks", "eks", "gke"}

// managedAPIServer reports whether the provider's API server flags are the
// cloud's, not the administrator's: there the API server cannot be told to
// present a client certificate to webhooks, and requiring one
// (webhook.clientAuth) would refuse every admission review.
func managedAPIServer(provider string) bool {
	return provider == "aks" || provider == "eks" || provider == "gke"
}

// k3s's default networks, which it does not publish anywhere a client can
// read.
var (
	k3sPodCIDR     = netip.MustParsePrefix("10.42.0.0/16")
	k3sServiceCIDR = netip.MustParsePrefix("10.43.0.0/16")
)

// networks are a cluster's pod and service CIDRs.
type networks struct {
	pod, service netip.Prefix
}

// detect finds the networks of a provider's cluster where the flags did
// not give them. cloudHint says how to read a cloud cluster's networks.
func detect(ctx context.Context, cs kubernetes.Interface, cfg *rest.Config, provider string, given networks, cloudHint string) (networks, error) {
	out := given
	switch provider {
	case "generic":
		if !out.pod.IsValid() || !out.service.IsValid() {
			return out, fmt.Errorf("the generic provider needs --pod-cidr and --service-cidr: it cannot tell a cluster's networks (kubeadm, kind and k3s are detected)")
		}
	case "kubeadm", "kind":
		return out, out.fillDetected(func() (netip.Prefix, netip.Prefix, error) { return controllerManagerNetworks(ctx, cs) })
	case "openshift":
		return out, out.fillDetected(func() (netip.Prefix, netip.Prefix, error) { return openShiftNetworks(ctx, cfg) })
	case "aks", "eks", "gke":
		if !out.pod.IsValid() || !out.service.IsValid() {
			return out, fmt.Errorf("install %s needs --pod-cidr and --service-cidr: this liqoctl does not call the cloud's API to read them; %s prints them", provider, cloudHint)
		}
	case "k3s":
		if !out.pod.IsValid() {
			out.pod = k3sPodCIDR
		}
		if !out.service.IsValid() {
			out.service = k3sServiceCIDR
		}
	default:
		return out, fmt.Errorf("unknown provider %q: use one of %s", provider, strings.Join(Providers, ", "))
	}
	return out, nil
}

// controllerManagerNetworks reads --cluster-cidr and
// --service-cluster-ip-range from the kube-controller-manager's static pod,
// where kubeadm (and kind, which runs kubeadm) put them.
func controllerManagerNetworks(ctx context.Context, cs kubernetes.Interface) (pod, svc netip.Prefix, err error) {
	pods, err := cs.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "component=kube-controller-manager"})
	if err != nil {
		return pod, svc, fmt.Errorf("reading the kube-controller-manager pod in kube-system: %w", err)
	}
	if len(pods.Items) == 0 {
		return pod, svc, fmt.Errorf("no kube-controller-manager pod (label component=kube-controller-manager) in kube-system to read the networks from")
	}
	args := flagsOf(&pods.Items[0])
	for flag, dst := range map[string]*netip.Prefix{"--cluster-cidr": &pod, "--service-cluster-ip-range": &svc} {
		v, ok := args[flag]
		if !ok {
			return pod, svc, fmt.Errorf("the kube-controller-manager has no %s flag", flag)
		}
		// Dual-stack clusters list one CIDR per family: the fabric is IPv4.
		first, _, _ := strings.Cut(v, ",")
		if *dst, err = netip.ParsePrefix(first); err != nil {
			return pod, svc, fmt.Errorf("the kube-controller-manager's %s=%q: %w", flag, v, err)
		}
	}
	return pod, svc, nil
}

// flagsOf are the --name=value flags of a pod's first container.
func flagsOf(p *corev1.Pod) map[string]string {
	out := map[string]string{}
	if len(p.Spec.Containers) == 0 {
		return out
	}
	c := p.Spec.Containers[0]
	for _, a := range append(append([]string{}, c.Command...), c.Args...) {
		if k, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(k, "--") {
			out[k] = v
		}
	}
	return out
}

// validate checks the networks against the cluster, as a wrong CIDR would
// break the fabric silently: every pod IP (but host-network pods') must be
// inside the pod CIDR, every ClusterIP inside the service CIDR, and the two
// must not overlap.
func validate(ctx context.Context, cs kubernetes.Interface, n networks) error {
	if n.pod.Overlaps(n.service) {
		return fmt.Errorf("the pod CIDR %s and the service CIDR %s overlap", n.pod, n.service)
	}
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing pods to check the pod CIDR: %w", err)
	}
	for _, p := range pods.Items {
		if p.Spec.HostNetwork {
			continue
		}
		for _, ip := range p.Status.PodIPs {
			a, err := netip.ParseAddr(ip.IP)
			if err != nil || !a.Is4() {
				continue
			}
			if !n.pod.Contains(a) {
				return fmt.Errorf("pod %s/%s has IP %s, outside the pod CIDR %s: give the cluster's pod network with --pod-cidr", p.Namespace, p.Name, a, n.pod)
			}
		}
	}
	svcs, err := cs.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing Services to check the service CIDR: %w", err)
	}
	for _, s := range svcs.Items {
		for _, ip := range s.Spec.ClusterIPs {
			a, err := netip.ParseAddr(ip)
			if err != nil || !a.Is4() {
				continue // None, or IPv6
			}
			if !n.service.Contains(a) {
				return fmt.Errorf("the Service %s/%s has ClusterIP %s, outside the service CIDR %s: give the cluster's service network with --service-cidr", s.Namespace, s.Name, a, n.service)
			}
		}
	}
	return nil
}

// fillDetected sets the networks the flags left unset to those detect
// reads from the cluster; it reads nothing when both are given.
func (n *networks) fillDetected(detect func() (pod, service netip.Prefix, err error)) error {
	if n.pod.IsValid() && n.service.IsValid() {
		return nil
	}
	pod, svc, err := detect()
	if err != nil {
		return fmt.Errorf("%w; pass --pod-cidr and --service-cidr", err)
	}
	if !n.pod.IsValid() {
		n.pod = pod
	}
	if !n.service.IsValid() {
		n.service = svc
	}
	return nil
}
