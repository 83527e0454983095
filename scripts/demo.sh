#!/usr/bin/env bash
# make demo: two nodes on this machine find each other over DNS-SD and exchange cards.
#
# Everything runs in a throw-away network namespace with its own D-Bus and avahi-daemon
# (scripts/lab.sh), so nothing is announced on this machine's real network. Both nodes get their
# own home directory; all of it is removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
nearcard=$(readlink -f "${1:?usage: demo.sh PATH/TO/nearcard}")
lab=scripts/lab.sh
ns=nearcard-demo

[ "$(id -u)" -eq 0 ] || { echo "demo: needs root (it creates a network namespace for the two nodes)" >&2; exit 4; }

work=$(mktemp -d /tmp/nearcard-demo.XXXXXX)
listener=
cleanup() {
  [ -n "$listener" ] && kill -TERM "$listener" 2>/dev/null && wait "$listener" 2>/dev/null || true
  "$lab" down "$ns" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
"$lab" down "$ns" >/dev/null 2>&1 || true

if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold= plain=; fi
step() { printf '\n%s== %s%s\n' "$bold" "$*" "$plain"; }
in_lab() { "$lab" exec "$ns" "$@"; }

step "A private LAN for the demo: namespace $ns, its own avahi-daemon on its loopback"
"$lab" up "$ns"
echo "avahi-daemon is running (host name $ns.local)."

step "Two people, each with an identity and a card"
ada=$work/ada grace=$work/grace
"$nearcard" init --home "$ada" --name "Ada Lovelace" >/dev/null
"$nearcard" card set --home "$ada" --name "Ada Lovelace" --email ada@example.org --company "Analytical Engines" \
  --title "Programmer" --social mastodon:ada:https://example.social/@ada --skill Mathematics >/dev/null
"$nearcard" share --home "$ada" --fields name,company,title,socialNetworks
"$nearcard" init --home "$grace" --name "Grace Hopper" >/dev/null
"$nearcard" card set --home "$grace" --name "Grace Hopper" --email grace@navy.mil --company "US Navy" \
  --title "Rear Admiral" --skill COBOL >/dev/null
"$nearcard" share --home "$grace" --fields name,email,company
"$nearcard" id --home "$ada" | head -3
"$nearcard" id --home "$grace" | head -3

step "Ada's laptop listens and publishes itself over DNS-SD (_nearcard._tcp)"
# lab.sh execs down to nearcard, so $! is the listener itself.
"$lab" exec "$ns" "$nearcard" listen --home "$ada" --accept all --message "Lovely to meet you, Grace!" >"$work/ada.log" 2>&1 &
listener=$!
for _ in $(seq 1 100); do grep -q "Published on the LAN" "$work/ada.log" && break; sleep 0.1; done
cat "$work/ada.log"

step "Grace's laptop looks for peers"
in_lab "$nearcard" peers --home "$grace"

step "Grace exchanges cards with \"Ada Lovelace\" (found by name over DNS-SD)"
in_lab "$nearcard" exchange "Ada Lovelace" --home "$grace" --yes --message "Likewise, Ada. Let's talk compilers."

for _ in $(seq 1 50); do [ -n "$("$nearcard" contacts --home "$ada" --json | grep -o '"Grace Hopper"')" ] && break; sleep 0.1; done
step "Ada's new contact"
"$nearcard" contacts show "Grace Hopper" --home "$ada"
step "Grace's new contact"
"$nearcard" contacts show "Ada Lovelace" --home "$grace"
echo
echo "Both contacts are verified: each card's signature checked, both sides consented, and both"
echo "screens showed the same check code. The demo's homes and namespace are removed now."
