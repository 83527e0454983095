#!/usr/bin/env bash
# Creates .venv with the independent Python peers the tests use (joserfc, PyNaCl, …).
# Re-running is cheap: it installs only when scripts/requirements-test.txt changed.
set -euo pipefail
cd "$(dirname "$0")/.."
req=scripts/requirements-test.txt
stamp=.venv/.requirements.sha256
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ -x .venv/bin/python3 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
python=$(command -v python3)
# Debian's python3 needs python3-venv for ensurepip; install-deps.sh provides it.
if [ ! -x .venv/bin/python3 ]; then
  "$python" -m venv .venv
fi
.venv/bin/python3 -m pip install --quiet --disable-pip-version-check -r "$req"
echo "$want" > "$stamp"
echo "setup-python: .venv ready" >&2
