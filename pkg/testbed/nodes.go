package testbed

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kwokNodeAnnotation marks the nodes kwok simulates; kwok manages only those,
// so virtual nodes created by the product are never touched by it.
const kwokNodeAnnotation = "kwok.x-k8s.io/node"

// kwokNodeIP is the InternalIP of every simulated node and the address kwok
// serves its kubelet API (logs, exec) at: the API server reaches that API at
// the node's InternalIP, so the two must be the same.
const kwokNodeIP = "127.0.0.1"

// NodeTypeLabel is set to "kwok" on every simulated node, so tests can tell
// them apart from virtual nodes.
const NodeTypeLabel = "type"

// forgeNode builds the Node object of one simulated node.
func forgeNode(pool NodePool, index int) (*corev1.Node, error) {
	name := fmt.Sprintf("%s-%d", pool.Prefix, index)
	cpu, err := resource.ParseQuantity(pool.CPU)
	if err != nil {
		return nil, fmt.Errorf("node pool %q: cpu %q: %w", pool.Prefix, pool.CPU, err)
	}
	mem, err := resource.ParseQuantity(pool.Memory)
	if err != nil {
		return nil, fmt.Errorf("node pool %q: memory %q: %w", pool.Prefix, pool.Memory, err)
	}
	disk, err := resource.ParseQuantity(pool.EphemeralStorage)
	if err != nil {
		return nil, fmt.Errorf("node pool %q: ephemeral-storage %q: %w", pool.Prefix, pool.EphemeralStorage, err)
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              cpu,
		corev1.ResourceMemory:           mem,
		corev1.ResourceEphemeralStorage: disk,
		corev1.ResourcePods:             *resource.NewQuantity(int64(pool.Pods), resource.DecimalSI),
	}
	labels := map[string]string{
		"kubernetes.io/hostname": name,
		"kubernetes.io/os":       "linux",
		"kubernetes.io/arch":     "amd64",
		"kubernetes.io/role":     "agent",
		NodeTypeLabel:            "kwok",
	}
	for k, v := range pool.Labels {
		labels[k] = v
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: labels,
			Annotations: map[string]string{
				kwokNodeAnnotation:             "fake",
				"node.alpha.kubernetes.io/ttl": "0",
				"liqo-testbed/pool-index":      strconv.Itoa(index),
			},
		},
		Spec: corev1.NodeSpec{Taints: pool.Taints},
		Status: corev1.NodeStatus{
			Capacity: capacity, Allocatable: capacity,
			// Both address types from the start: kwok's node-initialize
			// stage, which runs again whenever the node is not Ready (the
			// node lifecycle controller marks it Unknown once the API
			// server was down for long), writes an empty address list
			// over a node lacking either, and the node then loses the
			// InternalIP the API server reaches kwok's kubelet API at (the
			// API server prefers it to the Hostname, which resolves
			// nowhere).
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: kwokNodeIP},
				{Type: corev1.NodeHostName, Address: name},
			},
		},
	}, nil
}

func (c *Cluster) createNodes(ctx context.Context) error {
	cs := c.Client()
	for _, pool := range c.Spec.Nodes {
		for i := range pool.Count {
			node, err := forgeNode(pool, i)
			if err != nil {
				return err
			}
			if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("creating node %s: %w", node.Name, err)
			}
		}
	}
	return nil
}

func (c *Cluster) expectedNodes() int {
	n := 0
	for _, pool := range c.Spec.Nodes {
		n += pool.Count
	}
	return n
}
