#!/usr/bin/env bash
# The global ingress tutorial, adapted to the playground
# (examples/global-ingress/README.md says what is missing): podinfo's two
# replicas spread over rome and milan, the Service and the Ingress reflected
# into milan, and the same Service name answered by both replicas from
# either cluster. Needs KUBECONFIG (rome), KUBECONFIG_MILAN, kubectl and
# liqoctl on PATH.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
step() { printf '\n### %s\n' "$*"; }
# Twenty requests to the Service from a pod on a real node; the first ones
# are retried for 30 s, the time the provider needs to learn the endpoints.
twenty_requests() {
  kubectl run client -n default --image=busybox --restart=Never --rm -i --quiet \
    --overrides='{"spec":{"nodeSelector":{"type":"real"}}}' "$@" -- \
    sh -c 'for i in $(seq 30); do wget -qO- http://podinfo.podinfo:9898/ && break; sleep 1; done
           for i in $(seq 19); do wget -qO- http://podinfo.podinfo:9898/; done'
}

step "milan is a virtual node of rome's"
kubectl get node --selector=liqo.io/type=virtual-node

step "Offload namespace podinfo with the same name in milan, and deploy podinfo"
kubectl create namespace podinfo
liqoctl offload namespace podinfo --namespace-mapping-strategy EnforceSameName
kubectl apply -n podinfo -f "$here/podinfo.yaml"
kubectl rollout status -n podinfo deployment/podinfo --timeout=3m
kubectl get pods -n podinfo -o wide

step "The Ingress is in both clusters (milan's copy has no class: the default one would serve it)"
for i in $(seq 60); do
  kubectl get ingress podinfo -n podinfo --kubeconfig "$KUBECONFIG_MILAN" >/dev/null 2>&1 && break
  sleep 1
done
kubectl get ingress -n podinfo
kubectl get ingress -n podinfo --kubeconfig "$KUBECONFIG_MILAN"

step "From rome, the Service is answered by both replicas"
twenty_requests

step "From milan, the same Service name is answered by both replicas"
twenty_requests --kubeconfig "$KUBECONFIG_MILAN"
