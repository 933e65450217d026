#!/usr/bin/env bash
# The quick start on the playground (examples/quick-start/README.md):
# rome's namespace quickstart extended to milan, one web server on each
# side, reached by pod address and through a Service from either cluster's
# pods. Needs KUBECONFIG (rome), kubectl and liqoctl on PATH.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
step() { printf '\n### %s\n' "$*"; }

step "milan is a peer of rome's and a virtual node in it"
kubectl get foreignclusters
kubectl get nodes

step "Extend namespace quickstart to milan and start the two web servers"
kubectl create namespace quickstart
liqoctl offload namespace quickstart
kubectl apply -n quickstart -f "$here/hello-world.yaml"
kubectl wait -n quickstart --for=condition=Ready pod/hello-local pod/hello-remote --timeout=3m
kubectl get pods -n quickstart -o wide

step "Pod connectivity: a new pod of rome's fetches each server's page by its address"
LOCAL_POD_IP=$(kubectl get pod hello-local -n quickstart --template='{{.status.podIP}}')
REMOTE_POD_IP=$(kubectl get pod hello-remote -n quickstart --template='{{.status.podIP}}')
echo "Local Pod IP: ${LOCAL_POD_IP} - Remote Pod IP: ${REMOTE_POD_IP}"
# busybox's wget stands for the manual's curl; the pod is pinned to a real node.
# The commands go in on stdin: sh runs them only once kubectl is attached,
# so none of their output is lost to the attach.
kubectl run client -n default --image=busybox --restart=Never --rm -i --quiet \
  --overrides='{"spec":{"nodeSelector":{"type":"real"}}}' -- sh <<EOF
wget -qO- http://${LOCAL_POD_IP}:8080/ && wget -qO- http://${REMOTE_POD_IP}:8080/
EOF

step "The Service lists both pods as endpoints, the local one and the remote one"
kubectl describe service hello -n quickstart

step "Service connectivity: twenty requests by DNS name, answered by both servers"
kubectl run client -n default --image=busybox --restart=Never --rm -i --quiet \
  --overrides='{"spec":{"nodeSelector":{"type":"real"}}}' -- sh <<'EOF'
for i in $(seq 20); do wget -qO- http://hello.quickstart.svc.cluster.local/; done
EOF
