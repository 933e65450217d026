package testnet

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
)

// virtualNodes lists the local cluster's virtual nodes and the cluster IDs
// of the providers they stand for, sorted: with --remote-kubeconfigs, only
// those of the providers they reach.
func (o *Options) virtualNodes(ctx context.Context) (names, providers []string, err error) {
	var nodes corev1.NodeList
	if err := o.Local.Client.List(ctx, &nodes, client.MatchingLabels{consts.TypeLabel: consts.TypeVirtualNode}); err != nil {
		return nil, nil, fmt.Errorf("listing the virtual nodes: %w", err)
	}
	wanted, err := o.remoteProviders(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, n := range nodes.Items {
		id := n.Labels[consts.RemoteClusterIDLabel]
		if wanted != nil && !slices.Contains(wanted, id) {
			continue
		}
		names = append(names, n.Name)
		providers = append(providers, id)
	}
	for _, id := range wanted {
		if !slices.Contains(providers, id) {
			return nil, nil, fmt.Errorf("--remote-kubeconfigs: cluster %q is not a provider of the local cluster (no virtual node stands for it): peer with it first (liqoctl peer)", id)
		}
	}
	slices.Sort(names)
	slices.Sort(providers)
	return names, slices.Compact(providers), nil
}

// remoteProviders reaches each cluster --remote-kubeconfigs names and
// returns their cluster IDs; nil without the flag (every provider).
func (o *Options) remoteProviders(ctx context.Context) ([]string, error) {
	if len(o.RemoteKubeconfigs) == 0 {
		return nil, nil
	}
	var ids []string
	for _, path := range o.RemoteKubeconfigs {
		c := &factory.Cluster{Role: "remote", Kubeconfig: path, Namespace: consts.DefaultNamespace}
		if err := c.Connect(ctx, min(o.Timeout, 10*time.Second)); err != nil {
			return nil, fmt.Errorf("--remote-kubeconfigs %s: %w", path, err)
		}
		info, err := c.FindComponents(ctx)
		if err != nil {
			return nil, fmt.Errorf("--remote-kubeconfigs %s: %w", path, err)
		}
		ids = append(ids, info.ID)
	}
	return ids, nil
}

// printInfo prints, for --info, how the local cluster sees each provider's
// networks (the Configuration of its CIDRs, remapped where they overlap
// local ones) and the state of the tunnel to it.
func (o *Options) printInfo(ctx context.Context, providers []string) {
	for _, id := range providers {
		o.out.Info("Provider %s: %s", id, o.networkInfo(ctx, id))
	}
}

func (o *Options) networkInfo(ctx context.Context, id string) string {
	c := o.Local.Client
	key := types.NamespacedName{Namespace: consts.TenantNamespace(id), Name: id}
	var cfg netv1beta1.Configuration
	switch err := c.Get(ctx, key, &cfg); {
	case apierrors.IsNotFound(err):
		return "no network Configuration (peered with --networking-disabled?): its pods are reached only if the clusters share a network"
	case err != nil:
		return fmt.Sprintf("reading its Configuration %s: %v", key, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "pod CIDR %v, external CIDR %v", cfg.Spec.Remote.CIDR.Pod, cfg.Spec.Remote.CIDR.External)
	if r := cfg.Status.Remote; r != nil {
		fmt.Fprintf(&b, ", seen here as %v and %v", r.CIDR.Pod, r.CIDR.External)
	} else {
		b.WriteString(", not remapped yet")
	}
	var conns netv1beta1.ConnectionList
	if err := c.List(ctx, &conns, client.InNamespace(key.Namespace)); err != nil {
		fmt.Fprintf(&b, "; tunnel: %v", err)
		return b.String()
	}
	if len(conns.Items) == 0 {
		b.WriteString("; no tunnel (no Connection)")
	}
	for _, conn := range conns.Items {
		fmt.Fprintf(&b, "; tunnel %s %s", conn.Name, orUnknown(string(conn.Status.Value)))
		if l := conn.Status.Latency.Value; l != "" {
			fmt.Fprintf(&b, " (round trip %s)", l)
		}
	}
	return b.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
