# Sourced by the scripts that build test tools from the Go module proxy (test/e2e/harness/build-binaries.sh,
# test/monitoring/build-promtool.sh). Defines:
#   log MSG...                 one line to stderr, prefixed with $LOG_NAME and the time
#   use_go WHAT TESTS          puts Go on PATH with the build settings we use; without Go, exits the
#                              script: 1 in CI (the tests must run), else 0 after saying TESTS will be skipped

log() { printf '[%s %s] %s\n' "$LOG_NAME" "$(date +%H:%M:%S)" "$*" >&2; }

use_go() {
  if ! command -v go >/dev/null 2>&1; then
    if [ -x /usr/local/go/bin/go ]; then
      export PATH=/usr/local/go/bin:$PATH
    else
      log "Go is not installed: cannot build $1"
      if [ "${CI:-}" = "true" ]; then exit 1; fi
      log "*** $2 will be SKIPPED on this machine ***"
      exit 0
    fi
  fi
  export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
}
