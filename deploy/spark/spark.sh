#!/usr/bin/env bash
# Beam's Spark job server, and a Spark standalone cluster, on this machine (loopback only).
#
#   deploy/spark/spark.sh fetch                        # the job server's pathing jar; prints its path
#   deploy/spark/spark.sh fetch-spark                  # pyspark 3.5.7 in its own venv; prints SPARK_HOME
#   deploy/spark/spark.sh start-cluster [--cores 2] [--memory 8g]   # a master and one worker
#   deploy/spark/spark.sh status                       # the master's URL, workers and applications
#   deploy/spark/spark.sh start-job-server [--cluster | --master local[2]|spark://HOST:PORT] [--port 8098]
#   deploy/spark/spark.sh start-worker-pool [--port 50001]   # Beam's Python SDK workers (EXTERNAL)
#   deploy/spark/spark.sh stop-worker-pool | stop-job-server | stop-cluster
#
# Run it in the virtual environment where beambleu is installed. Logs and pid records go to
# ${BEAMBLEU_ENGINES_STATE:-./.beambleu-engines}/spark (or --state DIR), and every port is a free one
# unless given: deploy/flink/flink.sh, whose state is .../flink, runs beside it. Stop each service
# with its stop-* command. See deploy/spark/README.md.
# (beambleu run ... --runner SparkRunner alone starts the job server jar `fetch` put in
# beambleu's cache, with Spark inside it.)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
py="${PYTHON:-python}"
# a state folder of its own, so that Flink's services (flink.sh: .../flink) run beside these
export BEAMBLEU_ENGINES_STATE="${BEAMBLEU_ENGINES_STATE:-.beambleu-engines}/spark"
cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
    fetch) exec "$py" "$here/../engines.py" fetch spark-job-server ;;
    fetch-spark) exec "$py" "$here/cluster.py" fetch ;;
    start-cluster) exec "$py" "$here/cluster.py" start "$@" ;;
    stop-cluster) exec "$py" "$here/cluster.py" stop "$@" ;;
    status) exec "$py" "$here/cluster.py" status "$@" ;;
    start-job-server|stop-job-server) exec "$py" "$here/cluster.py" "$cmd" "$@" ;;
    start-worker-pool) exec "$py" "$here/../engines.py" start worker-pool "$@" ;;
    stop-worker-pool) exec "$py" "$here/../engines.py" stop worker-pool "$@" ;;
    *)
        echo "usage: deploy/spark/spark.sh fetch|fetch-spark|start-cluster|status|start-job-server|start-worker-pool|stop-worker-pool|stop-job-server|stop-cluster [options]" >&2
        exit 2 ;;
esac
