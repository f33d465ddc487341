#!/usr/bin/env bash
# Flink on this machine: Beam 2.62.0's Flink job server (a pathing jar of the runner libraries) and
# a real Flink 1.19.0 session cluster on loopback (from the apache-flink wheels, in a venv of its own).
#
#   deploy/flink/flink.sh fetch                          # the job-server jar and the Flink distribution; prints both
#   deploy/flink/flink.sh start-cluster [--rest-port 8081] [--slots 4]   # JobManager + TaskManager
#   deploy/flink/flink.sh status
#   deploy/flink/flink.sh start-job-server [--master localhost:8081|[local]] [--port 8099]
#   deploy/flink/flink.sh start-worker-pool [--port 50000]             # Python SDK workers (EXTERNAL)
#   deploy/flink/flink.sh stop-worker-pool | stop-job-server | stop-cluster
#
# Run it in the virtual environment where beambleu is installed (the worker pool runs its Python).
# State (pids, logs, the cluster's config) goes to ${BEAMBLEU_ENGINES_STATE:-./.beambleu-engines}/flink
# (or --state DIR), and every port is a free one unless given: deploy/spark/spark.sh, whose state
# is .../spark, runs beside it. Stop each service with its stop-* command (stop-cluster: 10-20 s).
# Then: beambleu run ... --runner FlinkRunner --job_endpoint localhost:8099 \
#         --environment_type EXTERNAL --environment_config localhost:50000 --parallelism 2
# (or, with Flink inside the job server and the workers in beambleu's process: beambleu run ...
# --runner FlinkRunner, which starts the job server jar `fetch` put in beambleu's cache).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
py="${PYTHON:-python}"
# a state folder of its own, so that Spark's services (spark.sh: .../spark) run beside these
export BEAMBLEU_ENGINES_STATE="${BEAMBLEU_ENGINES_STATE:-.beambleu-engines}/flink"
cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
    fetch)
        "$py" "$here/../engines.py" fetch flink-job-server
        exec "$py" "$here/cluster.py" home ;;
    start-cluster) exec "$py" "$here/cluster.py" start "$@" ;;
    stop-cluster) exec "$py" "$here/cluster.py" stop "$@" ;;
    status) exec "$py" "$here/cluster.py" status "$@" ;;
    start-job-server) exec "$py" "$here/../engines.py" start flink-job-server "$@" ;;
    stop-job-server) exec "$py" "$here/../engines.py" stop flink-job-server "$@" ;;
    start-worker-pool) exec "$py" "$here/../engines.py" start worker-pool "$@" ;;
    stop-worker-pool) exec "$py" "$here/../engines.py" stop worker-pool "$@" ;;
    *)
        echo "usage: deploy/flink/flink.sh fetch|start-cluster|status|stop-cluster|start-job-server|stop-job-server|start-worker-pool|stop-worker-pool [options]" >&2
        exit 2 ;;
esac
