#!/usr/bin/env bash
# Offloading a Service on the playground (examples/service-offloading/README.md):
# a Service whose pods run in rome only, reflected to milan and answering
# there too. Needs KUBECONFIG (rome), KUBECONFIG_MILAN, kubectl and liqoctl
# on PATH.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
step() { printf '\n### %s\n' "$*"; }
# A client pod on a real node fetching the schedule; it retries for 30 s,
# the time the provider needs to learn the Service's endpoints. The
# commands go in on stdin: sh runs them only once kubectl is attached, so
# none of their output is lost to the attach.
consume() {
  kubectl run consumer -n default --image=busybox --restart=Never --rm -i --quiet \
    --overrides='{"spec":{"nodeSelector":{"type":"real"}}}' "$@" -- sh <<'EOF'
for i in $(seq 30); do wget -qO- --header "accept: application/json" http://flights-service.flights:7999/schedule && exit 0; sleep 1; done; exit 1
EOF
}

step "Deploy the application in rome, in namespace flights"
kubectl create namespace flights
kubectl apply -n flights -f "$here/app.yaml"
kubectl rollout status -n flights deployment/flights-service --timeout=3m

step "Offload the namespace's Services to milan, keeping the pods local"
liqoctl offload namespace flights \
  --namespace-mapping-strategy EnforceSameName \
  --pod-offloading-strategy Local

step "The Service is reflected into milan (its own ClusterIP), with no pod there"
for i in $(seq 60); do
  kubectl get service flights-service -n flights --kubeconfig "$KUBECONFIG_MILAN" >/dev/null 2>&1 && break
  sleep 1
done
kubectl get services -n flights --kubeconfig "$KUBECONFIG_MILAN" -o wide
kubectl get pods -n flights --kubeconfig "$KUBECONFIG_MILAN"

step "Consume the Service from rome"
consume

step "Consume the Service from milan: the pod that answers runs in rome"
consume --kubeconfig "$KUBECONFIG_MILAN"
