#!/usr/bin/env python3
"""Floods a Nearcard node with bad connections, as an attacker on the LAN would.

  flood.py HOST PORT --sources 127.0.0.66,127.0.0.67 [--count 500] [--hold 14]

Opens COUNT connections, spread over the source addresses, in three kinds taken in turn:
  garbage    sends random bytes (a frame header, then noise) and waits
  slowloris  sends a frame header promising 60,000 bytes, then one byte a second
  churn      connects and closes at once
  idle       connects and sends nothing (a half-open scan, a stalled peer)
and keeps each open for up to HOLD seconds. Prints a JSON report: per kind, how many connections were
refused at connect, closed by the node (and how soon, median seconds), and still open at the end.
"""
import argparse
import asyncio
import json
import os
import statistics
import time

ap = argparse.ArgumentParser()
ap.add_argument("host")
ap.add_argument("port", type=int)
ap.add_argument("--sources", required=True)
ap.add_argument("--count", type=int, default=500)
ap.add_argument("--hold", type=float, default=14)
ap.add_argument("--kinds", default="garbage,slowloris,churn", help="which kinds, taken in turn")
args = ap.parse_args()
sources = args.sources.split(",")
kinds = args.kinds.split(",")
report = {k: {"opened": 0, "refused": 0, "closedByNode": 0, "closeSeconds": [], "stillOpen": 0} for k in kinds}


async def attack(i):
    kind = kinds[i % len(kinds)]
    r = report[kind]
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(args.host, args.port, local_addr=(sources[i % len(sources)], 0)), 5)
    except (OSError, asyncio.TimeoutError):
        r["refused"] += 1
        return
    r["opened"] += 1
    t0 = time.monotonic()
    try:
        if kind == "churn":
            writer.close()
            return
        if kind == "garbage":
            writer.write(bytes([0x01, 0x00]) + os.urandom(256 + i % 1024))
        elif kind == "idle":
            pass
        else:
            writer.write(bytes([0xEA, 0x60]))  # a 60,000-byte frame, which never comes
        await writer.drain()
        deadline = t0 + args.hold
        while time.monotonic() < deadline:
            try:
                data = await asyncio.wait_for(reader.read(4096), 1.0)
                if not data:  # the node closed it
                    r["closedByNode"] += 1
                    r["closeSeconds"].append(time.monotonic() - t0)
                    return
            except asyncio.TimeoutError:
                if kind == "slowloris":
                    writer.write(b"\x00")
                    await writer.drain()
        r["stillOpen"] += 1
    except (ConnectionError, OSError):
        r["closedByNode"] += 1
        r["closeSeconds"].append(time.monotonic() - t0)
    finally:
        writer.close()


async def main():
    await asyncio.gather(*(attack(i) for i in range(args.count)))


asyncio.run(main())
for r in report.values():
    s = r.pop("closeSeconds")
    r["medianCloseSeconds"] = round(statistics.median(s), 2) if s else None
print(json.dumps(report))
