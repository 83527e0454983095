#!/usr/bin/env python3
"""An independent DNS-SD publisher (python-zeroconf, not Avahi) for a Nearcard node that vanishes
without a goodbye: it announces `_nearcard._tcp` with short-lived SRV and address records, answers TCP
on its port, prints "published" and waits. The test kills it with SIGKILL (power off, cable pulled):
no goodbye is sent, and the records expire after --host-ttl seconds while the PTR would live 4500 s.

    vanishing_peer.py --name NAME --ip 127.0.0.1 --port 7997 --tag HEX32 [--host-ttl 5]
"""
import argparse
import socket
import sys
import time

from zeroconf import IPVersion, ServiceInfo, Zeroconf


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", required=True)
    ap.add_argument("--ip", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--tag", required=True, help="TXT t: 32 hex digits (docs/PROTOCOL.md §3)")
    ap.add_argument("--host-ttl", type=int, default=5)
    args = ap.parse_args()

    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((args.ip, args.port))
    listener.listen()

    zc = Zeroconf(interfaces=[args.ip], ip_version=IPVersion.V4Only)
    info = ServiceInfo(
        "_nearcard._tcp.local.",
        f"{args.name}._nearcard._tcp.local.",
        addresses=[socket.inet_aton(args.ip)],
        port=args.port,
        properties={"v": "2", "t": args.tag, "name": args.name},
        server=f"nc-{args.tag[16:]}.local.",
        host_ttl=args.host_ttl,
        other_ttl=4500,
    )
    zc.register_service(info, allow_name_change=False)
    print("published", flush=True)
    while True:
        conn, _ = listener.accept()
        conn.close()


if __name__ == "__main__":
    sys.exit(main())
