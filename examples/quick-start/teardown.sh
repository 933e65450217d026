#!/usr/bin/env bash
# Undoes examples/quick-start/run.sh; the playground stays peered.
set -euo pipefail
liqoctl unoffload namespace quickstart
kubectl delete namespace quickstart
