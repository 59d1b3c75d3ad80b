#!/usr/bin/env bash
# Builds the cloud's production bundle into OUT_DIR: the same steps the Dockerfile runs, so CI, which has no
# Docker engine, exercises them on the host (cloud/test/deploy.test.ts builds and starts a bundle).
#   bash scripts/build-cloud-bundle.sh OUT_DIR
set -euo pipefail
out=${1:?usage: build-cloud-bundle.sh OUT_DIR}
cd "$(dirname "$0")/.."

# The web app is built into cloud/web/dist when the workspace has one.
if pnpm --filter @hivegate/cloud run 2>/dev/null | grep -q '^  build:web'; then
  pnpm --filter @hivegate/cloud run build:web
fi
rm -rf "$out"
# A self-contained folder: the cloud package, its production dependencies and the shared contract.
pnpm --filter @hivegate/cloud deploy --prod --legacy "$out" >/dev/null
echo "cloud bundle in $out (start: cd $out && node --import tsx src/server.ts)"
