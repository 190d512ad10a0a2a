#!/usr/bin/env bash
# Builds promtool (Prometheus's rule and metrics checker) from the Go module proxy into a cache outside
# the repository keyed by version, as test/e2e/harness/build-binaries.sh does for kube-apiserver:
#   ${KUBE_DNS_TS_CACHE:-$HOME/.cache/kube-dns-ts}/promtool-<version>/bin/promtool
# Idempotent; builds to a temp name and renames. Prometheus v3 is published as module versions v0.3xx.
# Environment: KUBE_DNS_TS_CACHE, PROMETHEUS_MODULE_VERSION (default v0.316.0).
set -euo pipefail

VERSION=${PROMETHEUS_MODULE_VERSION:-v0.316.0}
CACHE_ROOT=${KUBE_DNS_TS_CACHE:-$HOME/.cache/kube-dns-ts}
BIN=$CACHE_ROOT/promtool-$VERSION/bin

LOG_NAME=build-promtool
# shellcheck source=../go-env.sh
. "$(dirname "$0")/../go-env.sh"

if [ -x "$BIN/promtool" ]; then
  log "cached: $BIN/promtool (nothing to do)"
  exit 0
fi
use_go "promtool for the monitoring tests" "the monitoring tests"
mkdir -p "$BIN"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log "Go: $(go version); building promtool $VERSION (the first build downloads Prometheus's modules)"
GOBIN=$work go install -trimpath "github.com/prometheus/prometheus/cmd/promtool@$VERSION"
mv -f "$work/promtool" "$BIN/promtool.tmp.$$"
mv -f "$BIN/promtool.tmp.$$" "$BIN/promtool"
log "built: $BIN/promtool"
