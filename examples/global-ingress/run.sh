#!/usr/bin/env bash
# The global ingress tutorial, adapted to the playground
# (examples/global-ingress/README.md says what is missing): podinfo's two
# replicas spread over rome and milan, the Service reflected into milan (the
# Ingress refused there, as a default install does), and the same Service
# name answered by both replicas from either cluster. Needs KUBECONFIG (rome), KUBECONFIG_MILAN, kubectl and
# liqoctl on PATH.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
step() { printf '\n### %s\n' "$*"; }
# Twenty requests to the Service from a pod on a real node; the first ones
# are retried for 30 s, the time the provider needs to learn the endpoints.
# The commands go in on stdin: sh runs them only once kubectl is attached,
# so none of their output is lost to the attach.
twenty_requests() {
  kubectl run client -n default --image=busybox --restart=Never --rm -i --quiet \
    --overrides='{"spec":{"nodeSelector":{"type":"real"}}}' "$@" -- sh <<'EOF'
for i in $(seq 30); do wget -qO- http://podinfo.podinfo:9898/ && break; sleep 1; done
for i in $(seq 19); do wget -qO- http://podinfo.podinfo:9898/; done
EOF
}

step "milan is a virtual node of rome's"
kubectl get node --selector=liqo.io/type=virtual-node

step "Offload namespace podinfo with the same name in milan, and deploy podinfo"
kubectl create namespace podinfo
liqoctl offload namespace podinfo --namespace-mapping-strategy EnforceSameName
kubectl apply -n podinfo -f "$here/podinfo.yaml"
kubectl rollout status -n podinfo deployment/podinfo --timeout=3m
kubectl get pods -n podinfo -o wide

step "The Ingress stays in rome: milan, like any default install, serves no consumer's Ingress"
# A provider's ingress controller is shared by its tenants; its
# administrator names the classes consumers may use (README.md says how).
# Until then the Ingress is refused, and the reason is an Event on it.
for i in $(seq 60); do
  kubectl get events -n podinfo --field-selector involvedObject.kind=Ingress,reason=ReflectionRefused \
    -o jsonpath='{.items[0].message}' 2>/dev/null | grep -q . && break
  sleep 1
done
kubectl get ingress -n podinfo
kubectl get events -n podinfo --field-selector involvedObject.kind=Ingress,reason=ReflectionRefused \
  -o custom-columns=REASON:.reason,MESSAGE:.message

step "From rome, the Service is answered by both replicas"
twenty_requests

step "From milan, the same Service name is answered by both replicas"
twenty_requests --kubeconfig "$KUBECONFIG_MILAN"
