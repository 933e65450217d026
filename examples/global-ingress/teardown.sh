#!/usr/bin/env bash
# Undoes examples/global-ingress/run.sh; the playground stays peered.
set -euo pipefail
liqoctl unoffload namespace podinfo
kubectl delete namespace podinfo
