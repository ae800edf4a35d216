#!/usr/bin/env bash
# The `envs` extra (TRL, openenv-core, verifiers) in a venv of its own over the main one: verifiers 0.4 pins
# mcp==2.0.0, which trajforge's own venv cannot hold beside what it runs (mcp 2.3). The new venv sees the main
# venv's packages (a .pth after its own site-packages), so pip installs only what differs: verifiers, its mcp, uv.
# Usage: scripts/envs-venv.sh MAIN_VENV ENVS_VENV
set -euo pipefail
main=$1 envs=$2
python3 -m venv "$envs"
main_site=$("$main/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
envs_site=$("$envs/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "import site; site.addsitedir('$main_site')" > "$envs_site/trajforge-main-venv.pth"
PYTHONWARNINGS="ignore:Editable installation" "$envs/bin/pip" install --quiet -e '.[envs]'  # as the Makefile's
