#!/usr/bin/env bash
# Undoes examples/offloading-with-policies/run.sh: rome stays peered with
# milan, naples is unpeered (its cluster keeps running).
set -euo pipefail
liqoctl unoffload namespace policies
kubectl delete namespace policies
liqoctl unpeer --remote-kubeconfig "$KUBECONFIG_NAPLES"
