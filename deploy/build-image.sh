#!/usr/bin/env bash
# Builds the codegen-chat image. The Python packages are downloaded here, with this machine's pip (its
# index, proxy and certificates), and installed in the image from those wheels: the build itself needs
# no index, and with --offline no image registry either.
#
#   deploy/build-image.sh [--offline] [--base IMAGE] [--tag TAG]
#
#   --offline     build from codegen-chat-sandbox/base:bookworm (`codegen-chat sandbox build --offline`)
#   --base IMAGE  build from IMAGE (default python:3.11-slim-bookworm); it needs python3 and pip
#   --tag TAG     name the image TAG (default codegen-chat:latest)
#   --extras LIST the package's extras too, comma-separated: kubernetes (tests in Pods), postgres (replicas)
set -euo pipefail
cd "$(dirname "$0")/.."

base=python:3.11-slim-bookworm
tag=codegen-chat:latest
extras=
while [ $# -gt 0 ]; do
  case "$1" in
    --offline) base=codegen-chat-sandbox/base:bookworm ;;
    --base) base="$2"; shift ;;
    --tag) tag="$2"; shift ;;
    --extras) extras="$2"; shift ;;
    *) echo "build-image: unknown argument $1 (see the top of $0)" >&2; exit 2 ;;
  esac
  shift
done

if ! docker image inspect "$base" >/dev/null 2>&1 && [ "$base" = codegen-chat-sandbox/base:bookworm ]; then
  echo "build-image: $base is missing: run \`codegen-chat sandbox build --offline\` first" >&2
  exit 1
fi

# Wheels only install into the Python they were built for: ask the base which one it has.
python=${PYTHON:-python3}
wanted=$(docker run --rm --network none --entrypoint python3 "$base" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
have=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
if [ "$wanted" != "$have" ]; then
  echo "build-image: $base has Python $wanted but $python is $have; set PYTHON to a python$wanted" >&2
  exit 1
fi

wheels=deploy/wheels
rm -rf "$wheels"
trap 'rm -rf "$wheels"' EXIT
echo "build-image: wheels for Python $wanted -> $wheels"
# Wheels stamped with the last commit's time, not the clock: unchanged code gives unchanged layers.
SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || echo 315532800)
export SOURCE_DATE_EPOCH
"$python" -m pip wheel --quiet --disable-pip-version-check --wheel-dir "$wheels" ".${extras:+[$extras]}"
echo "build-image: docker build from $base -> $tag"
docker build --build-arg "BASE=$base" --build-arg "EXTRAS=$extras" --tag "$tag" .
