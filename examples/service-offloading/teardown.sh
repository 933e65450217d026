#!/usr/bin/env bash
# Undoes examples/service-offloading/run.sh; the playground stays peered.
set -euo pipefail
liqoctl unoffload namespace flights
kubectl delete namespace flights
