#!/usr/bin/env bash
# Offloading with policies on the playground
# (examples/offloading-with-policies/README.md): rome peered with milan and
# naples, namespace policies offloaded to naples only, and pods whose own
# affinity disagrees with that left Pending. Needs KUBECONFIG (rome),
# KUBECONFIG_MILAN, KUBECONFIG_NAPLES, kubectl and liqoctl on PATH.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
step() { printf '\n### %s\n' "$*"; }

step "Peer rome with naples too (no pod here talks across clusters: no network fabric needed)"
liqoctl peer --remote-kubeconfig "$KUBECONFIG_NAPLES" --networking-disabled
kubectl get foreignclusters
kubectl get node --selector=liqo.io/type=virtual-node --show-labels

step "Offload namespace policies to naples only, pods free to run in rome too"
kubectl create namespace policies
liqoctl offload namespace policies \
  --namespace-mapping-strategy EnforceSameName \
  --pod-offloading-strategy LocalAndRemote \
  --selector 'liqo.io/remote-cluster-id=naples'
kubectl get namespaceoffloadings offloading -n policies -o yaml

step "The namespace exists in naples, not in milan"
kubectl get namespaces policies --kubeconfig "$KUBECONFIG_NAPLES"
if kubectl get namespaces policies --kubeconfig "$KUBECONFIG_MILAN"; then
  echo "policies was offloaded to milan, which the selector excludes" >&2
  exit 1
fi

step "Deploy app-south (wants naples) and app-center (wants milan)"
kubectl apply -n policies -f "$here/deploy.yaml"
kubectl rollout status -n policies deployment/app-south --timeout=3m
# app-center's pod can go nowhere: the scheduler says so.
kubectl wait -n policies pod -l app=app-center --for=jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}'=Unschedulable --timeout=1m
kubectl get pods -n policies -o wide
