#!/usr/bin/env bash
# A throw-away "laptop" for the demo (scripts/demo.sh; the tests, `simulate` and the benchmarks use the
# same set-up in Swift, NearcardSimulation's NetLab): a network namespace with its own D-Bus system bus and
# avahi-daemon. Nothing here touches the machine's real interfaces: avahi is restricted
# (allow-interfaces) to the namespace's own lo or to veth interfaces named on the command line.
#
#   lab.sh up NAME [IFACE…]     create namespace NAME (lo up), start dbus + avahi on lo or IFACE…
#   lab.sh exec NAME CMD…       run CMD inside NAME with DBUS_SYSTEM_BUS_ADDRESS pointing at its bus
#   lab.sh down NAME            stop its daemons and delete the namespace (by name)
#   lab.sh link A B             join namespaces A and B with a veth pair (nc-A / nc-B), IPv4 and IPv6
set -euo pipefail
root=${NEARCARD_LAB_DIR:-/tmp/nearcard-lab}

die() { echo "lab.sh: $*" >&2; exit 1; }

up() {
  local ns=$1; shift
  local dir=$root/$ns
  [ -e "/run/netns/$ns" ] && die "namespace $ns exists (lab.sh down $ns first)"
  mkdir -p "$dir/run-avahi"
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  local ifaces=${*:-lo}
  ifaces=${ifaces// /,}
  cat > "$dir/dbus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$dir/system_bus_socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
CONF
  cat > "$dir/avahi-daemon.conf" <<CONF
[server]
host-name=$ns
use-ipv4=yes
use-ipv6=yes
allow-interfaces=$ifaces
enable-dbus=yes
ratelimit-interval-usec=1000000
ratelimit-burst=1000
[wide-area]
enable-wide-area=no
[publish]
publish-hinfo=no
publish-workstation=no
[reflector]
enable-reflector=no
CONF
  # The daemons must not hold the caller's stdout/stderr (a test reading them would never see EOF).
  ip netns exec "$ns" dbus-daemon --config-file="$dir/dbus.conf" --fork --print-pid=3 3>"$dir/dbus.pid" \
    </dev/null >"$dir/dbus.log" 2>&1
  export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$dir/system_bus_socket"
  # avahi-daemon keeps its pid file and socket in /run/avahi-daemon: give it a private one.
  mkdir -p /run/avahi-daemon
  ip netns exec "$ns" unshare -m sh -c "mount --bind '$dir/run-avahi' /run/avahi-daemon && exec avahi-daemon --no-drop-root --no-chroot --no-rlimits -f '$dir/avahi-daemon.conf'" \
    </dev/null >"$dir/avahi.log" 2>&1 &
  echo $! > "$dir/avahi.pid"
  for _ in $(seq 1 100); do
    grep -q "Server startup complete" "$dir/avahi.log" 2>/dev/null && return 0
    sleep 0.1
  done
  cat "$dir/avahi.log" >&2
  die "avahi-daemon in $ns did not start"
}

run() {
  local ns=$1; shift
  local dir=$root/$ns
  [ -S "$dir/system_bus_socket" ] || die "no lab $ns (lab.sh up $ns)"
  exec ip netns exec "$ns" env DBUS_SYSTEM_BUS_ADDRESS="unix:path=$dir/system_bus_socket" "$@"
}

down() {
  local ns=$1
  local dir=$root/$ns
  for f in avahi dbus; do
    [ -f "$dir/$f.pid" ] && kill "$(cat "$dir/$f.pid")" 2>/dev/null || true
  done
  # Anything still running inside the namespace (nodes a test left behind).
  if [ -e "/run/netns/$ns" ]; then
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill "$pid" 2>/dev/null || true; done
    sleep 0.2
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
    ip netns del "$ns"
  fi
  rm -rf "$dir"
}

link() {
  local a=$1 b=$2
  ip link add "nc-$a" netns "$a" type veth peer name "nc-$b" netns "$b"
  ip -n "$a" addr add 10.77.0.1/24 dev "nc-$a"
  ip -n "$b" addr add 10.77.0.2/24 dev "nc-$b"
  ip -n "$a" link set "nc-$a" up
  ip -n "$b" link set "nc-$b" up
}

cmd=${1:-}; shift || true
case "$cmd" in
  up) [ $# -ge 1 ] || die "usage: lab.sh up NAME [IFACE…]"; up "$@" ;;
  exec) [ $# -ge 2 ] || die "usage: lab.sh exec NAME CMD…"; run "$@" ;;
  down) [ $# -eq 1 ] || die "usage: lab.sh down NAME"; down "$1" ;;
  link) [ $# -eq 2 ] || die "usage: lab.sh link A B"; link "$1" "$2" ;;
  *) die "usage: lab.sh up|exec|down|link …" ;;
esac
