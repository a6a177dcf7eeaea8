#!/bin/sh
# `npm start` and `npm test` run their script through this: `sh scripts/with-node24.sh SCRIPT ARGS…`
# runs `node SCRIPT ARGS…` under a Node recent enough for pi 1.x. When the Node on PATH is older,
# scripts/node24.sh (the one place that logic lives) fetches Node 24 into the cache once, and this
# says so in one line. `exec` all the way down: what is left running is node itself, not a shell or
# a launcher beside it.
set -eu
# The script's folder, without running dirname (every process here is paid at each `npm start`).
case "$0" in */*) here=${0%/*} ;; *) here=. ;; esac
setup=$(bash "$here/node24.sh")
case "$setup" in
  export*)
    old=$(node --version 2>/dev/null || echo "no node")
    eval "$setup"
    echo "threadhost: node $old on PATH is older than 22.19 (pi 1.x); running under node $(node --version) from the cache (scripts/node24.sh)" >&2
    ;;
esac
exec node "$@"
