#!/usr/bin/env bash
# Builds CoreDNS (the peer the API benchmark compares against) from the Go module proxy into the same cache
# the e2e binaries use, keyed by version:
#   ${KUBE_DNS_TS_CACHE:-$HOME/.cache/kube-dns-ts}/coredns-<version>/bin/coredns
# Idempotent: does nothing when the binary exists. `go install` writes into a temp GOBIN that is renamed into
# place, so an interrupted build never leaves a binary the benchmark would trust.
#
# v1.15.0 is the newest the module proxy served when the hostile benchmark was written (v1.13.x before it; bench/api-servers.ts looks for
# the same versions). First build: a few minutes and ~500 MB of modules.
# Environment: KUBE_DNS_TS_CACHE (cache root), COREDNS_VERSIONS (candidates tried in order, newest first).
set -euo pipefail

COREDNS_VERSIONS=${COREDNS_VERSIONS:-"v1.15.0 v1.13.2 v1.13.1"}
CACHE_ROOT=${KUBE_DNS_TS_CACHE:-$HOME/.cache/kube-dns-ts}

log() { printf '[build-coredns %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

for v in $COREDNS_VERSIONS; do
  if [ -x "$CACHE_ROOT/coredns-$v/bin/coredns" ]; then
    log "cached: $CACHE_ROOT/coredns-$v/bin/coredns (nothing to do)"
    exit 0
  fi
done

if ! command -v go >/dev/null 2>&1; then
  if [ -x /usr/local/go/bin/go ]; then
    export PATH=/usr/local/go/bin:$PATH
  else
    log "Go is not installed: the benchmark runs without the CoreDNS comparison"
    exit 0
  fi
fi

export GOTOOLCHAIN=local CGO_ENABLED=0
start=$(date +%s)
for v in $COREDNS_VERSIONS; do
  out=$CACHE_ROOT/coredns-$v
  tmp=$out/bin.tmp.$$
  mkdir -p "$out"
  rm -rf "$out"/bin.tmp.* # left by an interrupted build
  log "trying github.com/coredns/coredns@$v ($(go version))"
  if GOBIN=$tmp go install -trimpath -ldflags "-s -w" "github.com/coredns/coredns@$v"; then
    rm -rf "$out/bin"
    mv "$tmp" "$out/bin"
    log "built $out/bin/coredns in $(( $(date +%s) - start )) s"
    exit 0
  fi
  rm -rf "$tmp"
  log "$v could not be built, trying the next candidate"
done
log "none of [$COREDNS_VERSIONS] could be built"
exit 1
