#!/usr/bin/env bash
# Runs the example bot in the foreground: creates its identity and card on first use, checks the
# policy, then serves until Ctrl-C. JSON lines on stdout (pipe them to jq, or to your own program).
#   run-bot.sh [NEARCARD_HOME] [BOT OPTIONS…]     e.g. run-bot.sh ~/booth --metrics 127.0.0.1:9464
# The home is the first argument when it is not an option (else $NEARCARD_HOME, else
# ~/.local/share/nearcard-bot); every option goes to `nearcard bot` (nearcard bot --help). $PORT sets
# the port (7447), $NEARCARD the nearcard to run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
nearcard=${NEARCARD:-nearcard}
home=
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  home=$1
  shift
fi
export NEARCARD_HOME=${home:-${NEARCARD_HOME:-$HOME/.local/share/nearcard-bot}}
if ! "$nearcard" id >/dev/null 2>&1; then
  "$nearcard" init --name "Nearcard Booth" --no-passphrase >&2
  "$nearcard" card set --name "Nearcard Booth" --company "Nearcard" --email booth@example.org \
    --title "Exchange bot" >/dev/null
  "$nearcard" share --fields name,company,title,email >/dev/null
fi
"$nearcard" bot --policy "$here/policy.json" --check >/dev/null
exec "$nearcard" bot --policy "$here/policy.json" --port "${PORT:-7447}" "$@"
