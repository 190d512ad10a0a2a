#!/usr/bin/env bash
# Builds CoreDNS's image the way its release image is built (Containerfile.coredns), from the binary
# bench/build-coredns.sh builds from the Go module proxy, on the same local base stand-ins as ours
# (bases.sh): for side-by-side figures (image size in manifests/README.md). Tags it
# coredns/coredns:<version> and prints its size. Not part of npm test.
set -euo pipefail
LOG_NAME=build-coredns-image
# shellcheck source=bases.sh
. "$(dirname "$0")/bases.sh"
images_need_tools
bash "$repo/bench/build-coredns.sh"
bin=$(ls -d "$CACHE_ROOT"/coredns-v*/bin/coredns | sort -V | tail -n1)
version=$(basename "$(dirname "$(dirname "$bin")")"); version=${version#coredns-}
build_image_base
static_base
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$bin" "$dir/coredns"
podman build --pull=never --build-arg DEBIAN_IMAGE=node:24-bookworm-slim -f "$repo/test/cluster/images/Containerfile.coredns" -t "coredns/coredns:$version" "$dir" >&2
log "coredns/coredns:$version: $(podman image inspect --format '{{.Size}}' "coredns/coredns:$version") bytes"
