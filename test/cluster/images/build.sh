#!/usr/bin/env bash
# Builds the images from the unchanged Dockerfile with podman, one target each, as a user would
# (`podman build --target kube-dns .`), on local stand-ins for its default base images (bases.sh says
# how those are made and cached). Tags them kube-dns-ts/<target>:<package.json version> and writes
# tag → Dockerfile, target, bytes, seconds to $IMAGES_REPORT (default: the cache's images/report.json)
# for the tests. npm test runs it first (pretest).
# Needs root, podman, mmdebstrap; in CI (CI=true) a missing tool is fatal, elsewhere the image and
# cluster tests are skipped, loudly.
set -euo pipefail
LOG_NAME=build-images
# shellcheck source=bases.sh
. "$(dirname "$0")/bases.sh"
images_need_tools
cd "$repo"

build_image_base
runtime_base

version=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' package.json)
report=${IMAGES_REPORT:-$CACHE_ROOT/images/report.json}
entries=()
for target in kube-dns dnsmasq-nanny dnscache sidecar node-cache; do
  tag=kube-dns-ts/$target:$version
  start=$(date +%s)
  log "$tag: podman build --target $target"
  podman build --pull=never --target "$target" -t "$tag" . >&2
  size=$(podman image inspect --format '{{.Size}}' "$tag")
  seconds=$(( $(date +%s) - start ))
  log "$tag: built in $seconds s, $(( size / 1024 / 1024 )) MiB"
  entries+=("\"$tag\": {\"dockerfile\": \"Dockerfile\", \"target\": \"$target\", \"bytes\": $size, \"seconds\": $seconds}")
done
mkdir -p "$(dirname "$report")"
(IFS=,; printf '{%s}\n' "${entries[*]}") >"$report"

# What the cluster tier runs beside them: the pause stand-in every pod sandbox runs (catatonit in its
# pause mode) and the test pods' client (dig, curl, glibc's and musl's getaddrinfo from test/clients).
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp "$(command -v catatonit)" "$stage/pause"
printf 'FROM scratch\nCOPY pause /pause\nUSER 65535:65535\nENTRYPOINT ["/pause", "-P"]\n' >"$stage/Containerfile"
podman build --pull=never -t registry.k8s.io/pause:3.10 "$stage" >&2
gcc -O2 -o "$stage/lookup-glibc" test/clients/lookup.c
musl-gcc -O2 -static -o "$stage/lookup-musl" test/clients/lookup.c
podman build --pull=never -f test/cluster/images/Containerfile.client -t "kube-dns-ts/test-client:$version" "$stage" >&2

# Kubernetes' DNS e2e specs' images, when the cluster binaries are built (build-binaries.sh --cluster):
# agnhost and glibc-dns-testing, one stand-in under both names, with CoreDNS (bench/build-coredns.sh).
agnhost=$CACHE_ROOT/k8s-v1.36.3/bin/agnhost
if [ -x "$agnhost" ]; then
  bash bench/build-coredns.sh
  cp "$agnhost" "$stage/agnhost"
  cp "$(ls -d "$CACHE_ROOT"/coredns-v*/bin/coredns | sort -V | tail -n1)" "$stage/coredns"
  podman build --pull=never -f test/cluster/images/Containerfile.agnhost -t registry.k8s.io/e2e-test-images/agnhost:2.63.0 "$stage" >&2
  podman tag registry.k8s.io/e2e-test-images/agnhost:2.63.0 registry.k8s.io/e2e-test-images/glibc-dns-testing:2.0.0
elif [ "${CI:-}" = "true" ]; then
  log "agnhost is not built ($agnhost): run test/e2e/harness/build-binaries.sh --cluster first"
  exit 1
fi
log "done: $report; registry.k8s.io/pause:3.10, kube-dns-ts/test-client:$version and the e2e images for the cluster tier"
