#!/bin/sh
# runc for the cluster tier's containerd (its runtime's BinaryName): the bundle's process.oomScoreAdj
# clamped to >= 0 before runc reads it. root on these machines lacks CAP_SYS_RESOURCE, so runc cannot
# write the negative value the kubelet asks for every pod sandbox (-998), and every pod would fail with
# "can't get final child's PID from pipe: EOF". Nothing else changes.
bundle=
prev=
for arg in "$@"; do
  case "$prev" in --bundle|-b) bundle=$arg ;; esac
  case "$arg" in --bundle=*) bundle=${arg#--bundle=} ;; esac
  prev=$arg
done
config=$bundle/config.json
if [ -n "$bundle" ] && [ -f "$config" ] && [ "$(jq '.process.oomScoreAdj // 0 | . < 0' "$config")" = true ]; then
  jq '.process.oomScoreAdj = 0' "$config" >"$config.clamped" && mv "$config.clamped" "$config"
fi
exec runc "$@"
