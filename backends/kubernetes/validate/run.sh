#!/bin/sh
# The schema checks' driver, for CTest (backends/kubernetes/CMakeLists.txt).
#   run.sh setup DIR             copies the validator into DIR and installs its
#                                locked packages there with `npm ci` (npm registry)
#   run.sh check DIR ARGS...     node DIR/validate.mjs ARGS...
# Fails, naming what is missing, when Node.js, npm or the packages are absent:
# the manifests are never taken as valid without the schemas having run.
set -eu
mode=$1
dir=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
need() {
  command -v "$1" >/dev/null 2>&1 || {
    echo "FAIL: $1 not found on PATH; install it with tools/install-deps (Debian package $2)" >&2
    exit 1
  }
}
case "$mode" in
  setup)
    need node nodejs
    need npm npm
    mkdir -p "$dir"
    cp "$here/package.json" "$here/package-lock.json" "$here/validate.mjs" "$dir/"
    cd "$dir"
    npm ci --no-audit --no-fund --loglevel=error
    ;;
  check)
    need node nodejs
    if [ ! -f "$dir/node_modules/kubernetes-models/package.json" ]; then
      echo "FAIL: kubernetes-models is not installed in $dir/node_modules (the setup test runs npm ci)" >&2
      exit 1
    fi
    exec node "$dir/validate.mjs" "$@"
    ;;
  *)
    echo "usage: run.sh setup|check DIR [ARGS...]" >&2
    exit 2
    ;;
esac
