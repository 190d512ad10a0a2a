#!/usr/bin/env bash
# Builds the Kubernetes binaries the tests run, from the Go module proxy, into a cache outside the
# repository keyed by version:
#   ${KUBE_DNS_TS_CACHE:-$HOME/.cache/kube-dns-ts}/k8s-v1.36.3/bin/<name>
# By default kube-apiserver and etcd (the e2e tier); with --cluster also what a single-node cluster and
# Kubernetes' own DNS tests need (the cluster tier): kubelet, kube-proxy, kube-controller-manager,
# kube-scheduler, kubectl, e2e.test (`go test -c k8s.io/kubernetes/test/e2e`) and agnhost (the e2e
# images' test program).
# Idempotent: builds only what is missing. Each binary is built to a temp name and renamed, so an
# interrupted build never leaves a binary the harness would trust.
#
# Why a wrapper module: k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them with
# ./staging/..., so `go install k8s.io/kubernetes/cmd/kube-apiserver@v1.36.3` is refused. A module of our own
# that requires k8s.io/kubernetes and replaces each staging module by its published v0.36.3 builds fine.
# etcd's server module has the same kind of replace block; as a dependency those replaces are ignored.
# etcd gets its own wrapper module so its version never changes the etcd client libraries linked into
# kube-apiserver (minimal version selection would otherwise raise them).
#
# Environment: KUBE_DNS_TS_CACHE (cache root), K8S_VERSION (default v1.36.3),
# ETCD_VERSIONS (candidates tried in order; default "v3.6.8 v3.6.16").
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.36.3}
ETCD_VERSIONS=${ETCD_VERSIONS:-"v3.6.8 v3.6.16"}
CACHE_ROOT=${KUBE_DNS_TS_CACHE:-$HOME/.cache/kube-dns-ts}
OUT=$CACHE_ROOT/k8s-$K8S_VERSION
BIN=$OUT/bin

LOG_NAME=build-binaries
# shellcheck source=../../go-env.sh
. "$(dirname "$0")/../../go-env.sh"

# What each cluster binary is built from, in the release's module (kube-apiserver's wrapper module).
CLUSTER_BINARIES="kubelet:k8s.io/kubernetes/cmd/kubelet kube-proxy:k8s.io/kubernetes/cmd/kube-proxy
kube-controller-manager:k8s.io/kubernetes/cmd/kube-controller-manager kube-scheduler:k8s.io/kubernetes/cmd/kube-scheduler
kubectl:k8s.io/kubernetes/cmd/kubectl agnhost:k8s.io/kubernetes/test/images/agnhost e2e.test:k8s.io/kubernetes/test/e2e"
wanted="kube-apiserver etcd"
if [ "${1:-}" = "--cluster" ]; then
  for entry in $CLUSTER_BINARIES; do wanted="$wanted ${entry%%:*}"; done
fi
missing=""
for name in $wanted; do [ -x "$BIN/$name" ] || missing="$missing $name"; done
if [ -z "$missing" ]; then
  log "cached: $wanted in $BIN (nothing to do)"
  exit 0
fi

# In CI the e2e tier must run, so no Go is fatal there; elsewhere the e2e tests skip, loudly.
use_go "kube-apiserver/etcd for the e2e tests" "the e2e tests"
mkdir -p "$BIN" "$OUT/src"
rm -f "$BIN"/*.tmp.* # left by an interrupted build
log "Go: $(go version); cache: $OUT"
log "the first build downloads ~1 GB of modules and compiles for about 12 minutes on 2 cores (all nine with --cluster: 10.5 min measured 2026-11-25)"

# go build to a temp name next to the target, then rename (atomic on one filesystem).
# build_to TARGET VERB ARGS...: `go VERB -trimpath -o <temp> ARGS...` (VERB `build`, or `test -c` for a
# test binary), renamed to TARGET when it succeeds.
build_to() {
  local target=$1 verb=$2; shift 2
  local tmp="$target.tmp.$$"
  rm -f "$tmp"
  # shellcheck disable=SC2086 # `test -c` is two words
  if go $verb -trimpath -o "$tmp" "$@"; then
    mv -f "$tmp" "$target"
  else
    rm -f "$tmp"
    return 1
  fi
}

# The wrapper module every Kubernetes binary is built in (kube-apiserver's, for the name of its folder).
release_module() {
  local dir=$OUT/src/kube-apiserver
  local staging=v0.${K8S_VERSION#v1.}
  mkdir -p "$dir"
  cd "$dir"
  [ -f go.mod ] || go mod init local/kube-dns-ts-k8s >/dev/null 2>&1
  grep -q "k8s.io/kubernetes $K8S_VERSION" go.mod && grep -q " => k8s.io/[a-z0-9-]* $staging" go.mod && return 0
  # The release's go.mod says which Go it needs; take its `go` line and its staging replace list as they are.
  log "k8s.io/kubernetes $K8S_VERSION: reading the release's go.mod"
  local gomod
  gomod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  [ -n "$gomod" ] && [ -f "$gomod" ] || { log "could not download k8s.io/kubernetes@$K8S_VERSION"; return 1; }
  local godirective
  godirective=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$gomod" | head -n1)
  go mod edit -go="$godirective" -require="k8s.io/kubernetes@$K8S_VERSION"
  local modules
  modules=$(sed -n 's#^[[:space:]]*\(k8s\.io/[a-z0-9-]*\) => \./staging/.*#\1#p' "$gomod")
  local count=0
  for m in $modules; do
    go mod edit -replace="$m=$m@$staging"
    count=$((count + 1))
  done
  [ "$count" -gt 0 ] || { log "no staging replace lines found in $gomod"; return 1; }
  log "release module: $count staging modules replaced by $staging (go $godirective)"
}

# build_k8s NAME PACKAGE: one binary of the release, with its version stamped in as a release build has.
build_k8s() {
  local name=$1 pkg=$2 minor
  minor=$(echo "$K8S_VERSION" | cut -d. -f2)
  release_module
  log "$name: resolving dependencies"
  go get "$pkg@$K8S_VERSION"
  local version_flags="-X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
  log "$name: compiling"
  local verb=build
  [ "$name" = e2e.test ] && verb="test -c" # a test binary
  build_to "$BIN/$name" "$verb" -ldflags "-s -w $version_flags" "$pkg"
  log "$name: built $BIN/$name ($(du -h "$BIN/$name" | cut -f1))"
}

build_etcd() {
  local dir=$OUT/src/etcd
  mkdir -p "$dir"
  cd "$dir"
  [ -f go.mod ] || go mod init local/kube-dns-ts-etcd >/dev/null 2>&1
  local v
  for v in $ETCD_VERSIONS; do
    log "etcd: trying go.etcd.io/etcd/server/v3@$v"
    if go get "go.etcd.io/etcd/server/v3@$v"; then
      log "etcd $v: compiling"
      build_to "$BIN/etcd" build -ldflags "-s -w" go.etcd.io/etcd/server/v3
      echo "$v" > "$OUT/etcd-version"
      log "etcd: built $BIN/etcd ($v, $(du -h "$BIN/etcd" | cut -f1))"
      return 0
    fi
    log "etcd: $v is not available, trying the next candidate"
  done
  log "etcd: none of [$ETCD_VERSIONS] could be fetched"
  return 1
}

start=$(date +%s)
[ -x "$BIN/etcd" ] || build_etcd
[ -x "$BIN/kube-apiserver" ] || build_k8s kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver
for entry in $CLUSTER_BINARIES; do
  case " $missing " in *" ${entry%%:*} "*) build_k8s "${entry%%:*}" "${entry#*:}" ;; esac
done
log "done in $(( $(date +%s) - start )) s: $("$BIN/kube-apiserver" --version 2>/dev/null || echo kube-apiserver), etcd $(cat "$OUT/etcd-version" 2>/dev/null || echo '?')${missing:+; built:$missing}"
