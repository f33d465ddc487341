#!/usr/bin/env bash
# Beam's Prism runner on this machine, built from the Go module at the installed apache-beam's version.
#
#   deploy/prism/prism.sh fetch                 # go install ...@v<beam>; prints the binary's path
#   deploy/prism/prism.sh start [--port 8073]   # in the background; prints where it listens
#   deploy/prism/prism.sh stop
#
# Run it in the virtual environment where beambleu is installed (it reads Beam's version there).
# Then: beambleu run ... --runner PrismRunner --job_endpoint localhost:8073
# (or, without starting it: beambleu run ... --runner PrismRunner, which starts the binary `fetch`
# put in beambleu's cache, fetching it there first if need be).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cmd="${1:-}"
case "$cmd" in
    fetch) exec "${PYTHON:-python}" "$here/../engines.py" fetch prism ;;
    start|stop) shift; exec "${PYTHON:-python}" "$here/../engines.py" "$cmd" prism "$@" ;;
    *) echo "usage: deploy/prism/prism.sh fetch|start [--port P]|stop" >&2; exit 2 ;;
esac
