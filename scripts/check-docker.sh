#!/usr/bin/env bash
# scripts/check-docker.sh: the Dockerfile and docker-compose.yml build the same
# release as the README's commands, and run it. Where a docker daemon answers:
#  1. `docker build` of the Dockerfile (install-deps.sh, the release preset);
#  2. every app's --version inside the image (the same line as a local build);
#  3. the README's test command inside the container (privileged, so the
#     namespace and TUN tests run), unless TT_DOCKER_QUICK=1;
# and `docker compose config` checks the compose file. Where no daemon answers
# (this project's CI machine has the client only) it says so and exits 0:
# docker/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v docker >/dev/null 2>&1 || ! timeout 20 docker info >/dev/null 2>&1; then
  echo "check-docker: skipped: no docker daemon answers here (docker info failed)"
  exit 0
fi
tag="tinytcp-check:$$"
cleanup() { docker image rm -f "$tag" >/dev/null 2>&1 || true; }
trap cleanup EXIT
docker build -t "$tag" .
for dir in apps/*/; do
  app=$(basename "$dir")
  [ "$app" = common ] && continue
  docker run --rm "$tag" "$app" --version
done
if docker compose version >/dev/null 2>&1; then
  docker compose -f docker-compose.yml config --quiet
fi
if [ "${TT_DOCKER_QUICK:-0}" != 1 ]; then
  docker run --rm --privileged "$tag" ./scripts/test.sh
fi
echo "check-docker: ok"
