#!/usr/bin/env bash
# Creates benchmarks/.venv with the reference implementations the benchmarks measure beside
# Nearcard (py_ecc, groth16py). Re-running is cheap: it installs only when the requirements changed.
set -euo pipefail
cd "$(dirname "$0")/.."
req=benchmarks/requirements.txt
stamp=benchmarks/.venv/.requirements.sha256
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ -x benchmarks/.venv/bin/python3 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
[ -x benchmarks/.venv/bin/python3 ] || python3 -m venv benchmarks/.venv
benchmarks/.venv/bin/python3 -m pip install --quiet --disable-pip-version-check -r "$req"
echo "$want" > "$stamp"
echo "setup-bench-python: benchmarks/.venv ready" >&2
