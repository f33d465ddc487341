#!/usr/bin/env bash
# Start a dask scheduler and N worker processes (one thread each) on this machine, for
# `beambleu run --runner dask --dask_client_address tcp://127.0.0.1:8786`.
#
#   deploy/dask/start-local-cluster.sh [N_WORKERS] [PORT]     (defaults: number of cores, 8786)
#
# Run it in the virtual environment where beambleu is installed with the dask extra: the
# workers import beambleu. Stop the cluster with Ctrl-C.
set -euo pipefail

workers="${1:-$(nproc)}"
port="${2:-8786}"
address="tcp://127.0.0.1:${port}"
logs="$(mktemp -d -t beambleu-dask-XXXXXX)"
pids=()

cleanup() {
    if [ "${#pids[@]}" -gt 0 ]; then
        kill "${pids[@]}" 2>/dev/null || true
        wait "${pids[@]}" 2>/dev/null || true
    fi
}
trap cleanup EXIT INT TERM

dask scheduler --host 127.0.0.1 --port "$port" --no-dashboard >"$logs/scheduler.log" 2>&1 &
pids+=("$!")
for _ in $(seq 50); do
    if python -c "import socket, sys; s = socket.socket(); sys.exit(s.connect_ex(('127.0.0.1', $port)))"; then
        break
    fi
    sleep 0.2
done

# dask's nanny sets MALLOC_TRIM_THRESHOLD_=65536 for its worker, which also pins glibc's mmap
# threshold at 128 KiB: every larger buffer is mapped and unmapped anew (2.4x the page faults,
# 5-10% more CPU). Leave glibc its own thresholds, as beambleu does for the DaskRunner's local
# cluster (DASK_WORKER_ENV in pipeline/beam/runners.py), unless the caller chose otherwise.
nanny_environ="{'MALLOC_TRIM_THRESHOLD_': None}"
export DASK_DISTRIBUTED__NANNY__PRE_SPAWN_ENVIRON="${DASK_DISTRIBUTED__NANNY__PRE_SPAWN_ENVIRON:-$nanny_environ}"

for i in $(seq 1 "$workers"); do
    dask worker "$address" --nworkers 1 --nthreads 1 --no-dashboard --name "worker-$i" \
        >"$logs/worker-$i.log" 2>&1 &
    pids+=("$!")
done

echo "dask scheduler at $address with $workers worker process(es); logs in $logs"
echo "  beambleu run --runner dask --dask_client_address $address --input ... --output ..."
wait
