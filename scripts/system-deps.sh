#!/usr/bin/env bash
# Install and start what trajforge needs outside Python: the Docker daemon, debootstrap (the sandbox image
# is built without a registry), tmux, Chromium (the browser environment), npm (third-party MCP servers). Idempotent: installs only what is missing, starts dockerd only if down.
set -euo pipefail

need=()
command -v dockerd >/dev/null || need+=(docker.io)
command -v debootstrap >/dev/null || need+=(debootstrap)
command -v tmux >/dev/null || need+=(tmux)
command -v chromium >/dev/null || need+=(chromium)
command -v npx >/dev/null || need+=(npm)
if ((${#need[@]})); then
  if [ "$(id -u)" != 0 ]; then
    echo "system-deps: missing ${need[*]}; install them as root (apt-get install ${need[*]})" >&2
    exit 0
  fi
  echo "system-deps: installing ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

if ! docker info >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then
    echo "system-deps: the Docker daemon is not running and this is not root; start it to run sandboxes" >&2
    exit 0
  fi
  echo "system-deps: starting dockerd"
  nohup dockerd >/var/log/trajforge-dockerd.log 2>&1 &
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 0.5; done
  docker info >/dev/null 2>&1 || { echo "system-deps: dockerd did not start; see /var/log/trajforge-dockerd.log" >&2; exit 1; }
fi
