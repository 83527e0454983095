#!/usr/bin/env bash
# make demo: for now, two identities side by side (the LAN exchange replaces this).
set -euo pipefail
nearcard=${1:?usage: demo.sh PATH/TO/nearcard}
work=$(mktemp -d /tmp/nearcard-demo.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$nearcard" init --home "$work/ada" --name "Ada Lovelace" >/dev/null
"$nearcard" init --home "$work/grace" --name "Grace Hopper" >/dev/null
for who in ada grace; do
  echo "== $who"
  "$nearcard" id --home "$work/$who"
done
