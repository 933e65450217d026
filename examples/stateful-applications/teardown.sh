#!/usr/bin/env bash
# Undoes examples/stateful-applications/run.sh; the playground stays peered.
# The volumes go first: unoffload refuses while a PVC has its volume on a
# provider (or give it --delete-remote-volumes).
set -euo pipefail
kubectl delete statefulset db -n stateful
kubectl delete pvc --all -n stateful
liqoctl unoffload namespace stateful
kubectl delete namespace stateful
