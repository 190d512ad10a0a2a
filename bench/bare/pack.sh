#!/usr/bin/env bash
# Packs what a benchmark needs onto a machine where nothing can be installed (a bigger machine lent for a
# few minutes, to measure how answering scales with cores): into bench/bare/pack/ (ignored), ~55 MB.
#   node.xz               this checkout's Node (the `node` devDependency), stripped
#   node_modules.tar.xz   the runtime dependencies only (npm ci --omit=dev)
#   tools.tar.xz          dnsperf, dnsmasq, taskset and tcpdump (bench:fair's hits on the wire) with every library they load and the loader that
#                         runs them (so they run on any x86-64 Linux), and CoreDNS (static)
#   commit                the commit packed, for the results (the copy there has no .git)
# Then carry `dist` and `bench/bare/pack` there and run `bash bench/bare/run.sh node bench/scale.ts`.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=bench/bare/pack
rm -rf "$out"
mkdir -p "$out"
npm run build >/dev/null

cp node_modules/node/bin/node "$out/node"
strip "$out/node"
xz -T0 -9 "$out/node"

deps=$(mktemp -d)
tools=$(mktemp -d)
trap 'rm -rf "$deps" "$tools"' EXIT
cp package.json package-lock.json "$deps/"
(cd "$deps" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund >/dev/null)
tar -C "$deps" -cf - node_modules | xz -T0 -6 >"$out/node_modules.tar.xz"

mkdir -p "$tools/sys/bin" "$tools/sys/lib" "$tools/cache"
for bin in "$(command -v dnsperf)" /usr/sbin/dnsmasq "$(command -v taskset)" "$(command -v tcpdump)"; do
  cp "$bin" "$tools/sys/bin/"
  # Every library ldd resolves, and the loader (the line with no "=>").
  ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | xargs -r -I{} cp -L {} "$tools/sys/lib/"
done
bash bench/build-coredns.sh
coredns=$(ls -d "${KUBE_DNS_TS_CACHE:-$HOME/.cache/kube-dns-ts}"/coredns-v*/ | sort -V | tail -1)
cp -r "$coredns" "$tools/cache/"
tar -C "$tools" -cf - sys cache | xz -T0 -6 >"$out/tools.tar.xz"

git log -1 --format='%h %s' >"$out/commit"
[ -z "$(git status --porcelain --untracked-files=no)" ] || sed -i 's/$/ + uncommitted changes/' "$out/commit"
du -sh "$out"
