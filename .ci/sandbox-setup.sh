#!/usr/bin/env bash
# Prepares a fresh Debian 12 machine (as root) for the sandbox tests: Docker engine, debootstrap,
# a running dockerd, and the offline language images. Idempotent: what is already there is kept.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)

need=()
dpkg -s docker.io >/dev/null 2>&1 || need+=(docker.io)
dpkg -s debootstrap >/dev/null 2>&1 || need+=(debootstrap)
dpkg -s runsc >/dev/null 2>&1 || need+=(runsc)  # gVisor, for [sandbox] runtime = "runsc" (tests/sandbox/test_gvisor.py)
if [ ${#need[@]} -gt 0 ]; then
  echo "sandbox-setup: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # docker.io brings containerd, runc, iptables and tini (the init the sandbox runs under).
  apt-get install -y -qq --no-install-recommends "${need[@]}" ca-certificates >/dev/null
fi

# Register runsc with the engine, beside whatever daemon.json already holds. ptrace is the platform that needs no
# KVM; gVisor's own network stack is off (the sandbox has no network while tests run anyway).
python3 - <<'PY'
import json, pathlib
path = pathlib.Path("/etc/docker/daemon.json")
config = json.loads(path.read_text() or "{}") if path.exists() else {}
if "runsc" not in config.setdefault("runtimes", {}):
    config["runtimes"]["runsc"] = {"path": "/usr/bin/runsc", "runtimeArgs": ["--platform=ptrace", "--network=none"]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config, indent=2) + "\n")
PY

if ! docker info >/dev/null 2>&1; then
  echo "sandbox-setup: starting dockerd"
  nohup dockerd >/var/log/dockerd.log 2>&1 &
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
  docker info >/dev/null 2>&1 || { echo "sandbox-setup: dockerd did not come up:"; tail -20 /var/log/dockerd.log; exit 1; }
fi
# An engine that was already running reads its runtimes again on SIGHUP.
if ! docker info --format '{{json .Runtimes}}' | grep -q runsc; then
  pkill -HUP -x dockerd || true
  for _ in $(seq 1 10); do docker info --format '{{json .Runtimes}}' | grep -q runsc && break; sleep 1; done
fi

# Skips images that already exist; the first build takes about two minutes (see the report below).
python3 -c 'import sys; from codegen_chat.cli import main; sys.exit(main(sys.argv[1:]))' sandbox build --offline
echo "sandbox-setup: ready in $(( $(date +%s) - started ))s"
