#!/bin/sh
# The chart installed on a real cluster (docs/deployment.md "Install test"): `ct install` with
# deploy/helm/sessionledger/ci/install-values.yaml, in a namespace that enforces the Pod Security Standard
# "restricted", against the dependencies of deploy/helm/ci/dependencies.yaml; then `helm test` (the
# sign-in page through the Service). Needs kubectl (a context on a disposable cluster: kind, k3d, a CI
# cluster), helm, ct, and the image pushed where the cluster can pull it:
#
#   IMAGE=ghcr.io/acme/sessionledger:0.1.0 make chart-install-test
set -eu
: "${IMAGE:?set IMAGE=repository:tag (or repository@sha256:…) of a pushed image}"
NAMESPACE=${NAMESPACE:-sessionledger-ct}
DEPS=sessionledger-ct-deps
case "$IMAGE" in
  *@sha256:*) set_image="image.repository=${IMAGE%@*},image.digest=${IMAGE#*@}" ;;
  *) set_image="image.repository=${IMAGE%:*},image.tag=${IMAGE##*:}" ;;
esac

kubectl create namespace "$DEPS" --dry-run=client -o yaml | kubectl apply -f -
kubectl -n "$DEPS" apply -f deploy/helm/ci/dependencies.yaml
kubectl -n "$DEPS" rollout status deployment/postgres deployment/redis deployment/s3 --timeout=300s

kubectl create namespace "$NAMESPACE" --dry-run=client -o yaml | kubectl apply -f -
kubectl label --overwrite namespace "$NAMESPACE" pod-security.kubernetes.io/enforce=restricted
kubectl -n "$NAMESPACE" create secret generic sessionledger-files \
  --from-literal=SECRET_KEY="$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')" --dry-run=client -o yaml | kubectl apply -f -
kubectl -n "$NAMESPACE" create secret generic sessionledger-database-owner --dry-run=client -o yaml \
  --from-literal=DATABASE_URL="postgres://sessionledger_owner:owner-password@postgres.$DEPS.svc:5432/sessionledger" | kubectl apply -f -
kubectl -n "$NAMESPACE" create secret generic sessionledger-database --dry-run=client -o yaml \
  --from-literal=DATABASE_URL="postgres://sessionledger_runtime:runtime-password@postgres.$DEPS.svc:5432/sessionledger" | kubectl apply -f -
kubectl -n "$NAMESPACE" create secret generic sessionledger-redis --dry-run=client -o yaml \
  --from-literal=REDIS_URL="redis://redis.$DEPS.svc:6379/0" | kubectl apply -f -
kubectl -n "$NAMESPACE" create secret generic sessionledger-s3 --dry-run=client -o yaml \
  --from-literal=S3_ACCESS_KEY_ID=sessionledger --from-literal=S3_SECRET_ACCESS_KEY=s3-secret-key | kubectl apply -f -

# ct installs the chart, waits for every pod to be ready, runs `helm test`, then uninstalls it.
ct install --config deploy/helm/ct.yaml --namespace "$NAMESPACE" --helm-extra-set-args "--set=$set_image"

if [ -z "${KEEP:-}" ]; then kubectl delete namespace "$NAMESPACE" "$DEPS" --wait=false; fi
