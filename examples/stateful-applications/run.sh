#!/usr/bin/env bash
# Stateful applications on the playground (examples/stateful-applications/README.md):
# a StatefulSet whose replicas run one in rome, one in milan, each with a
# volume of the liqo StorageClass where its pod runs; the data outlives the
# pods, whose replacements go back where their data is. Needs KUBECONFIG
# (rome), kubectl and liqoctl on PATH.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
step() { printf '\n### %s\n' "$*"; }
ready() { kubectl rollout status -n stateful statefulset/db --timeout=3m; }

step "Offload namespace stateful with the same name in milan, and deploy the database"
kubectl create namespace stateful
liqoctl offload namespace stateful --namespace-mapping-strategy EnforceSameName
kubectl apply -n stateful -f "$here/db.yaml"
ready
kubectl get pods -n stateful -o wide
kubectl get pvc -n stateful

step "Insert a row in each replica"
for r in 0 1; do
  kubectl exec -n stateful db-$r -- sh -c "echo '$((r + 1)),Smith,John,123 Main St,Anytown,written in db-$r' >> /data/people.csv"
done

step "Query the data, from a client pod, through each replica"
# The commands go in on stdin: sh runs them only once kubectl is attached,
# so none of their output is lost to the attach.
kubectl run db-client -n default --image=busybox --restart=Never --rm -i --quiet \
  --overrides='{"spec":{"nodeSelector":{"type":"real"}}}' -- sh <<'EOF'
for r in 0 1; do wget -qO- http://db-$r.db.stateful:8080/people.csv; done
EOF

step "Delete both replicas: the new pods go where their volumes are (data gravity)"
kubectl get pods -n stateful -o custom-columns=POD:.metadata.name,NODE:.spec.nodeName --no-headers | sort > /tmp/stateful-before.$$
kubectl delete pod -n stateful db-0 db-1
ready
kubectl get pods -n stateful -o custom-columns=POD:.metadata.name,NODE:.spec.nodeName --no-headers | sort > /tmp/stateful-after.$$
cat /tmp/stateful-after.$$
if diff /tmp/stateful-before.$$ /tmp/stateful-after.$$ >/dev/null; then echo "every replica is back on its node"; fi
rm -f /tmp/stateful-before.$$ /tmp/stateful-after.$$

step "Query again: the rows survived"
for r in 0 1; do
  kubectl exec -n stateful db-$r -- cat /data/people.csv
done
