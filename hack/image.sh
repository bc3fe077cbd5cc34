#!/usr/bin/env bash
# Builds one container image from a Dockerfile and a build context that the Makefile
# staged, and saves it as an OCI archive, which the test bed's nodes import into their
# containerd. The build pulls nothing: every Dockerfile here starts FROM scratch, so no
# registry is needed or reached.
#
# Usage: hack/image.sh <image ref> <Dockerfile> <context dir> <archive> [build-arg...]
#
# The container tool is $CONTAINER_TOOL, or podman, or docker when its daemon answers.
# With neither, it installs podman from Debian when it runs as root with apt-get, and
# otherwise says what is missing.
set -euo pipefail

if [[ $# -lt 4 ]]; then
  echo "usage: $0 <image ref> <Dockerfile> <context dir> <archive> [build-arg...]" >&2
  exit 2
fi
ref=$1 dockerfile=$2 context=$3 archive=$4
shift 4

tool=${CONTAINER_TOOL:-}
if [[ -z $tool ]]; then
  if command -v podman >/dev/null 2>&1; then
    tool=podman
  elif command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
    tool=docker
  elif [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    echo ">> installing podman (Debian package) to build the images" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 podman >/dev/null
    tool=podman
  else
    echo "make image needs a container tool: install podman ('sudo apt-get install podman' on Debian or Ubuntu)," >&2
    echo "or start the Docker daemon, or set CONTAINER_TOOL to a docker-compatible command" >&2
    exit 1
  fi
fi

build_args=()
for arg in "$@"; do
  build_args+=(--build-arg "$arg")
done

echo ">> building $ref with $tool" >&2
case $tool in
  *podman*)
    # --pull=never: a base that is not here fails at once instead of reaching for a
    # registry. FROM scratch needs none.
    "$tool" build --quiet --pull=never "${build_args[@]}" -t "$ref" -f "$dockerfile" "$context" >/dev/null
    save=("$tool" save --format oci-archive)
    ;;
  *)
    "$tool" build --quiet "${build_args[@]}" -t "$ref" -f "$dockerfile" "$context" >/dev/null
    save=("$tool" save)
    ;;
esac

# Written under a temporary name first, so that an interrupted save never leaves a
# broken archive behind.
mkdir -p "$(dirname "$archive")"
rm -f "$archive.tmp"
"${save[@]}" --quiet -o "$archive.tmp" "$ref"
mv "$archive.tmp" "$archive"
echo ">> saved $ref to $archive" >&2
