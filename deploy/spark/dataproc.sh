#!/usr/bin/env bash
# beambleu on Dataproc (Spark 3): build the pipeline into a jar with Beam's SparkRunner and
# submit it as a Spark job; the executors run the beambleu worker image (DOCKER environment).
#
#   PROJECT=my-project REGION=europe-west1 CLUSTER=beambleu IMAGE=europe-west1-docker.pkg.dev/my-project/beambleu/beambleu-worker:0.1.0 \
#       deploy/spark/dataproc.sh 'gs://my-bucket/pairs/*.parquet' gs://my-bucket/results/bleu.json
#
# Needs gcloud (authenticated), Java 11+ for Beam's Spark job-server jar (fetched from Maven
# Central the first time), and the worker image pushed where the cluster can pull it.
set -euo pipefail

: "${PROJECT:?set PROJECT}" "${REGION:?set REGION}" "${CLUSTER:?set CLUSTER}" "${IMAGE:?set IMAGE}"
input="${1:?usage: $0 INPUT_GLOB OUTPUT_JSON}"
output="${2:?usage: $0 INPUT_GLOB OUTPUT_JSON}"
jar="$(mktemp -d)/beambleu-spark-job.jar"

if ! gcloud dataproc clusters describe "$CLUSTER" --region "$REGION" --project "$PROJECT" >/dev/null 2>&1; then
    gcloud dataproc clusters create "$CLUSTER" --region "$REGION" --project "$PROJECT" \
        --image-version 2.2-debian12 --optional-components DOCKER --num-workers 2
fi

beambleu run --input "$input" --group-by system --output "$output" \
    --runner SparkRunner --spark_version 3 --output_executable_path "$jar" \
    --environment_type DOCKER --environment_config "$IMAGE"

gcloud dataproc jobs submit spark --cluster "$CLUSTER" --region "$REGION" --project "$PROJECT" \
    --class org.apache.beam.runners.spark.SparkPipelineRunner --jars "$jar"
