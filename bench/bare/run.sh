#!/usr/bin/env bash
# Runs a benchmark on a bare machine from what bench/bare/pack.sh packed: unpacks Node, the runtime
# dependencies and the tools into /tmp/bare, puts dnsperf, dnsmasq, taskset and tcpdump on PATH as wrappers that
# run them through their own loader and libraries (dnsmasq at /usr/sbin/dnsmasq too, where the benches
# look for it, when none is there), then runs the command given, e.g.
#   bash bench/bare/run.sh node bench/scale.ts
set -euo pipefail
cd "$(dirname "$0")/../.."
pack=bench/bare/pack
root=/tmp/bare
mkdir -p "$root/bin"

unxz() {
  if command -v xz >/dev/null 2>&1; then xz -dc; else python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.stdin.buffer), sys.stdout.buffer)'; fi
}
unxz <"$pack/node.xz" >"$root/bin/node"
chmod +x "$root/bin/node"
[ -d node_modules ] || unxz <"$pack/node_modules.tar.xz" | tar -xf -
unxz <"$pack/tools.tar.xz" | tar -C "$root" -xf -

loader=$(ls "$root"/sys/lib/ld-linux-*.so.*)
for tool in dnsperf dnsmasq taskset tcpdump; do
  # tcpdump stays root (-Z root): a bare machine may have no user "tcpdump" to drop to.
  flags=; [ "$tool" = tcpdump ] && flags='-Z root'
  printf '#!/bin/sh\nexec %s --library-path %s %s %s "$@"\n' "$loader" "$root/sys/lib" "$root/sys/bin/$tool" "$flags" >"$root/bin/$tool"
  chmod +x "$root/bin/$tool"
done
[ -e /usr/sbin/dnsmasq ] || ln -s "$root/bin/dnsmasq" /usr/sbin/dnsmasq

export PATH=$root/bin:$PATH KUBE_DNS_TS_CACHE=$root/cache BENCH_COMMIT="$(cat "$pack/commit")"
exec "$@"
