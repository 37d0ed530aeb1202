#!/usr/bin/env bash
# Makes `docker compose up --build` of a generated stack work on this machine: a Docker engine
# (Debian's docker.io, started here when none runs), Compose v2 (Debian trixie's docker-compose
# plugin: bookworm does not package it), and the base images the generated Dockerfiles name.
# Where no image registry can be reached, each base image is a stand-in built from Debian's
# packages under the official name (scripts/docker-standins/), with this machine's CA bundle inside
# so builds reach the package registries. Idempotent: what exists is kept (images stay cached).
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '[docker-setup] %s\n' "$*"; }

if ! command -v dockerd >/dev/null 2>&1 || ! command -v debootstrap >/dev/null 2>&1; then
  log "installing docker.io and debootstrap"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker.io debootstrap >/dev/null
fi

if ! docker info >/dev/null 2>&1; then
  log "starting dockerd"
  (nohup dockerd >/var/log/charter-dockerd.log 2>&1 &)
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || { log "dockerd did not start; see /var/log/charter-dockerd.log"; exit 1; }
fi

if ! docker compose version >/dev/null 2>&1; then
  log "installing Compose v2 from Debian trixie's docker-compose package"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  mkdir -p "$work/lists/partial"
  printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' >"$work/trixie.sources"
  apt_opts=(-qq -oDir::Etc::SourceList="$work/trixie.sources" -oDir::Etc::SourceParts=/dev/null -oDir::State::Lists="$work/lists" -oAPT::Sandbox::User=root)
  apt-get "${apt_opts[@]}" update
  (cd "$work" && apt-get "${apt_opts[@]}" download docker-compose)
  dpkg -x "$work"/docker-compose_*.deb "$work/x"
  mkdir -p "$HOME/.docker/cli-plugins"
  cp "$work/x/usr/libexec/docker/cli-plugins/docker-compose" "$HOME/.docker/cli-plugins/docker-compose"
  docker compose version
fi

have() { docker image inspect "$1" >/dev/null 2>&1; }
# A registry that answers wins; here none does, and the pull fails at once.
pulled() { timeout 20 docker pull -q "$1" >/dev/null 2>&1; }

base=charter-standin/debian:bookworm
if ! have "$base"; then
  rootfs=/var/cache/charter-rootfs
  if [ ! -x "$rootfs/bin/sh" ]; then
    log "debootstrap --variant=minbase bookworm (about a minute)"
    rm -rf "$rootfs"
    debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian >/dev/null
  fi
  # The CA bundle of this machine, so pip, npm and apt inside builds trust what the host trusts;
  # its local CAs too, so an image that installs ca-certificates rebuilds a bundle that has them.
  mkdir -p "$rootfs/etc/ssl/certs" "$rootfs/usr/local/share/ca-certificates"
  cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
  cp /usr/local/share/ca-certificates/*.crt "$rootfs/usr/local/share/ca-certificates/" 2>/dev/null || true
  log "importing $base"
  tar -C "$rootfs" -c . | docker import \
    -c 'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt PIP_CERT=/etc/ssl/certs/ca-certificates.crt NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt REQUESTS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt' \
    -c 'CMD ["bash"]' - "$base" >/dev/null
fi

standin() { # standin NAME:TAG DIR [build args...]
  local tag=$1 dir=$2
  shift 2
  have "$tag" && return 0
  pulled "$tag" && return 0
  log "building stand-in $tag"
  docker build -q --build-arg BASE="$base" "$@" -t "$tag" "$dir" >/dev/null
}

standin python:3.11-slim-bookworm scripts/docker-standins/python
# Node: this machine's own Node.js binary and npm, copied in (Debian bookworm's nodejs is 18).
node_ctx=$(mktemp -d)
cp "$(command -v node)" "$node_ctx/node"
cp -r "$(dirname "$(readlink -f "$(command -v npm)")")/.." "$node_ctx/npm"
# Its headers too, where the official image has them, so node-gyp builds native modules offline.
cp -r "$(dirname "$(readlink -f "$(command -v node)")")/../include/node" "$node_ctx/include"
cp scripts/docker-standins/node/Dockerfile "$node_ctx/Dockerfile"
standin node:20-bookworm-slim "$node_ctx"
rm -rf "$node_ctx"
standin postgres:16-bookworm scripts/docker-standins/postgres
log "ready: $(docker compose version --short 2>/dev/null || true) on engine $(docker version --format '{{.Server.Version}}')"
