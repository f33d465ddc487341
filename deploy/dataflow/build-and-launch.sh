#!/usr/bin/env bash
# Build the beambleu Flex Template image, register the template, and launch one job.
#
#   PROJECT=my-project REGION=europe-west1 BUCKET=my-bucket deploy/dataflow/build-and-launch.sh \
#       'gs://my-bucket/pairs/*.parquet' gs://my-bucket/results/bleu.json
#
# Needs gcloud (authenticated) and docker; run it from anywhere inside the repository.
set -euo pipefail

: "${PROJECT:?set PROJECT}" "${REGION:?set REGION}" "${BUCKET:?set BUCKET}"
input="${1:?usage: $0 INPUT_GLOB OUTPUT_JSON}"
output="${2:?usage: $0 INPUT_GLOB OUTPUT_JSON}"
repo_root="$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --show-toplevel)"
repository="${REPOSITORY:-beambleu}"
image="${REGION}-docker.pkg.dev/${PROJECT}/${repository}/beambleu-dataflow:0.1.0"
template="gs://${BUCKET}/templates/beambleu-0.1.0.json"

gcloud artifacts repositories describe "$repository" --location "$REGION" --project "$PROJECT" >/dev/null 2>&1 \
    || gcloud artifacts repositories create "$repository" --repository-format docker \
        --location "$REGION" --project "$PROJECT"
gcloud auth configure-docker "${REGION}-docker.pkg.dev" --quiet

docker build -f "$repo_root/deploy/dataflow/Dockerfile" -t "$image" "$repo_root"
docker push "$image"

gcloud dataflow flex-template build "$template" \
    --image "$image" \
    --sdk-language PYTHON \
    --metadata-file "$repo_root/deploy/dataflow/metadata.json" \
    --project "$PROJECT"

gcloud dataflow flex-template run "beambleu-$(date +%Y%m%d-%H%M%S)" \
    --template-file-gcs-location "$template" \
    --region "$REGION" \
    --project "$PROJECT" \
    --temp-location "gs://${BUCKET}/tmp" \
    --parameters "input=${input}" \
    --parameters "output=${output}" \
    --parameters "group_by=system" \
    --parameters "sdk_container_image=${image}"
