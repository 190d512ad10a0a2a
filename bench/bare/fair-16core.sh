#!/usr/bin/env bash
# bench:fair on a lent 16-core machine, in one call (run through bench/bare/run.sh): ours with their
# defaults, then kube-dns and dnscache with --workers=4, then the peers; each part's results copied to
# $OUT as soon as it ends, so a part that outruns the lease loses only itself.
# S (BENCH_SECONDS, 5), F (the flood's rate, 200000); A, B, C: the systems of each part (- skips it).
set -o pipefail
export BENCH_SECONDS=${S:-5} BENCH_FAIR_FLOOD=${F:-200000} BENCH_FAIR_FLOOD_THREADS=2
out=${OUT:-bench/results}
part() {
  local name=$1
  shift
  case " $* " in *" BENCH_FAIR_SYSTEMS=- "*) return ;; esac
  local since
  since=$(mktemp)
  env BENCH_FAIR_NAME="$name" "$@" timeout 200 node bench/fair-share.ts 2>&1 | grep -E '^  |^\|' | head -40
  # Only this run's files: the committed ones of the same name would crowd what comes back.
  [ "$out" = bench/results ] || find bench/results -name "$name-*" -newer "$since" -exec cp {} "$out"/ \;
  rm -f "$since"
  date
}
nproc; date
part fair-share-16core-steering BENCH_FAIR_SYSTEMS="${A:-kube-dns,dnscache,node-cache}"
part fair-share-16core-steering-workers4 BENCH_FAIR_WORKERS=4 BENCH_FAIR_SYSTEMS="${B:-kube-dns,dnscache}"
part fair-share-16core-steering-peers BENCH_FAIR_SYSTEMS="${C:-coredns,coredns (cache + forward),dnsmasq:cache,dnscache (fair share off)}"
