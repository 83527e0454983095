#!/usr/bin/env python3
"""A passive observer of Nearcard announcements (python-zeroconf, not Avahi): it browses
`_nearcard._tcp` on one interface address and writes one JSON line per announcement it sees resolved
(added or updated): instance name, every TXT value, the SRV target host, port and addresses. A tracker
on the LAN sees no more than this; the test checks that nothing in it links two announcements of a
private node (docs/PROTOCOL.md §3).

    presence_observer.py --ip 10.77.0.2 --out FILE
"""
import argparse
import json
import socket
import sys
import threading
import time

from zeroconf import IPVersion, ServiceBrowser, ServiceStateChange, Zeroconf

TYPE = "_nearcard._tcp.local."


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ip", required=True, help="the interface address to listen on")
    ap.add_argument("--out", required=True, help="where to append the JSON lines")
    args = ap.parse_args()

    zc = Zeroconf(interfaces=[args.ip], ip_version=IPVersion.V4Only)
    out = open(args.out, "a", buffering=1)
    lock = threading.Lock()
    seen = set()

    def record(name):
        # Resolve now: the SRV, TXT and address records as they are at this moment.
        info = zc.get_service_info(TYPE, name, timeout=3000)
        if info is None:
            return
        txt = {k.decode("utf-8", "replace"): (v.decode("utf-8", "replace") if v is not None else None)
               for k, v in (info.properties or {}).items()}
        entry = {"instance": name[: -len("." + TYPE)], "txt": txt, "host": info.server, "port": info.port,
                 "addresses": sorted(socket.inet_ntoa(a) for a in info.addresses if len(a) == 4), "time": time.time()}
        key = json.dumps([entry["instance"], txt, entry["host"]], sort_keys=True)
        with lock:
            if key in seen:
                return
            seen.add(key)
            out.write(json.dumps(entry) + "\n")

    def on_change(zeroconf, service_type, name, state_change):
        if state_change in (ServiceStateChange.Added, ServiceStateChange.Updated):
            threading.Thread(target=record, args=(name,), daemon=True).start()

    ServiceBrowser(zc, TYPE, handlers=[on_change])
    print("observing", flush=True)
    try:
        while True:
            time.sleep(1)
    finally:
        zc.close()


if __name__ == "__main__":
    sys.exit(main())
