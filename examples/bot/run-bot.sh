#!/usr/bin/env bash
# Runs the example bot in the foreground: creates its identity and card on first use, checks the
# policy, then serves until Ctrl-C. JSON lines on stdout (pipe them to jq, or to your own program).
#   examples/bot/run-bot.sh [NEARCARD_HOME]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
nearcard=${NEARCARD:-nearcard}
export NEARCARD_HOME=${1:-${NEARCARD_HOME:-$HOME/.local/share/nearcard-bot}}
if ! "$nearcard" id >/dev/null 2>&1; then
  "$nearcard" init --name "Nearcard Booth" --no-passphrase >&2
  "$nearcard" card set --name "Nearcard Booth" --company "Nearcard" --email booth@example.org \
    --title "Exchange bot" >/dev/null
  "$nearcard" share --fields name,company,title,email >/dev/null
fi
"$nearcard" bot --policy "$here/policy.json" --check >/dev/null
exec "$nearcard" bot --policy "$here/policy.json" --port "${PORT:-7447}"
