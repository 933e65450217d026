package testbed

import (
	"os"
	"path/filepath"
)

// kwokGatewayStage makes kwok play the network gateway's leader election
// on simulated nodes, as it plays every container: a running gateway pod
// (networking.liqo.io/component=gateway) is labelled active, which the
// real gateway does once it holds its Lease (pkg/gateway, election.go).
// Without it no simulated gateway would ever carry a tunnel, and the
// controllers waiting for one would wait forever. Every replica gets the
// label: simulated gateways have no tunnel to share.
const kwokGatewayStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: liqo-gateway-active
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchLabels:
      networking.liqo.io/component: gateway
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Running'
    - key: '.metadata.labels["networking.liqo.io/active"]'
      operator: 'DoesNotExist'
  next:
    patches:
    - root: metadata
      subresource: ''
      type: merge
      template: |
        labels:
          networking.liqo.io/active: "true"
`

func (c *Cluster) kwokGatewayConfig() string { return filepath.Join(c.Dir, "kwok-gateway.yaml") }

func (c *Cluster) writeKwokGatewayConfig() error {
	return os.WriteFile(c.kwokGatewayConfig(), []byte(kwokGatewayStage), 0o644)
}
