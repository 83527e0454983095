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
ns=nearcard-demo-$$   # unique: two demos (or test runs) at once do not meet

[ "$(id -u)" -eq 0 ] || { echo "demo: needs root to build its stage (a network namespace and two accounts); the nodes themselves run unprivileged" >&2; exit 4; }

# Root builds the stage only: Ada and Grace are ordinary accounts (created on first use, reused after),
# and every nearcard command below runs as one of them.
for user in nearcard-demo-ada nearcard-demo-grace; do
  id -u "$user" >/dev/null 2>&1 || useradd --system --user-group --no-create-home --home-dir /nonexistent \
    --shell /usr/sbin/nologin --comment "Nearcard demo (unprivileged)" "$user"
done

work=$(mktemp -d /tmp/nearcard-demo.XXXXXX)
chmod 0755 "$work"   # each person's folder inside is theirs alone (0700)
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

ada=$work/ada grace=$work/grace
install -d -m 0700 -o nearcard-demo-ada -g nearcard-demo-ada "$ada"
install -d -m 0700 -o nearcard-demo-grace -g nearcard-demo-grace "$grace"
# The build folder may be out of the accounts' reach (a checkout under /root): then they run a copy.
if ! setpriv --reuid=nearcard-demo-ada --regid=nearcard-demo-ada --init-groups test -x "$nearcard"; then
  install -D -m 0755 "$nearcard" "$work/bin/nearcard"
  nearcard=$work/bin/nearcard
fi
# as USER HOME CMD…: run CMD as that account, with that home.
as() { local user=$1 home=$2; shift 2; setpriv --reuid="$user" --regid="$user" --init-groups env HOME="$home" USER="$user" LOGNAME="$user" "$@"; }
as_ada() { as nearcard-demo-ada "$ada" env NEARCARD_HOME="$ada/nearcard" "$nearcard" "$@"; }
as_grace() { as nearcard-demo-grace "$grace" env NEARCARD_HOME="$grace/nearcard" "$nearcard" "$@"; }
in_lab() { "$lab" exec "$ns" "$@"; }

step "A private LAN for the demo: namespace $ns, its own avahi-daemon on its loopback"
"$lab" up "$ns"
echo "avahi-daemon is running (host name $ns.local)."

step "Two people, each an ordinary account (not root), each with an identity and a card"
as_ada init --name "Ada Lovelace" --no-passphrase >/dev/null
as_ada card set --name "Ada Lovelace" --email ada@example.org --company "Analytical Engines" \
  --title "Programmer" --social mastodon:ada:https://example.social/@ada --skill Mathematics >/dev/null
as_ada share --fields name,company,title,socialNetworks
as_grace init --name "Grace Hopper" --no-passphrase >/dev/null
as_grace card set --name "Grace Hopper" --email grace@navy.mil --company "US Navy" \
  --title "Rear Admiral" --skill COBOL >/dev/null
as_grace share --fields name,email,company
as_ada id | head -3
as_grace id | head -3

step "Ada's laptop listens (as nearcard-demo-ada) and publishes itself over DNS-SD (_nearcard._tcp)"
# lab.sh, setpriv and env each exec the next, so $! is the listener itself.
in_lab setpriv --reuid=nearcard-demo-ada --regid=nearcard-demo-ada --init-groups env HOME="$ada" \
  "$nearcard" listen --home "$ada/nearcard" --accept all --message "Lovely to meet you, Grace!" >"$work/ada.log" 2>&1 &
listener=$!
for _ in $(seq 1 100); do grep -q "Published on the LAN" "$work/ada.log" && break; sleep 0.1; done
cat "$work/ada.log"

step "Grace's laptop (as nearcard-demo-grace) looks for peers"
in_lab setpriv --reuid=nearcard-demo-grace --regid=nearcard-demo-grace --init-groups env HOME="$grace" \
  "$nearcard" peers --home "$grace/nearcard"

step "Grace exchanges cards with \"Ada Lovelace\" (found by name over DNS-SD)"
in_lab setpriv --reuid=nearcard-demo-grace --regid=nearcard-demo-grace --init-groups env HOME="$grace" \
  "$nearcard" exchange "Ada Lovelace" --home "$grace/nearcard" --yes --message "Likewise, Ada. Let's talk compilers."

for _ in $(seq 1 50); do [ -n "$(as_ada contacts --json | grep -o '"Grace Hopper"')" ] && break; sleep 0.1; done
step "Ada's new contact"
as_ada contacts show "Grace Hopper"
step "Grace's new contact"
as_grace contacts show "Ada Lovelace"
echo
echo "Both contacts are verified: each card's signature checked, both sides consented, and both"
echo "screens showed the same check code. Each person's files are theirs alone:"
stat -c '  %A %U %n' "$ada/nearcard" "$ada/nearcard/secret-keys.json" "$grace/nearcard" "$grace/nearcard/secret-keys.json"
echo "The demo's homes and namespace are removed now."
