#!/usr/bin/env python3
"""Floods a Nearcard node with bad connections, as an attacker on the LAN would.

  flood.py HOST PORT --sources 127.0.0.66,127.0.0.67 [--count 500] [--hold 14]

Opens COUNT connections, spread over the source addresses, in three kinds taken in turn:
  garbage    sends random bytes (a frame header, then noise) and waits
  slowloris  sends a frame header promising 60,000 bytes, then one byte a second
  churn      connects and closes at once
  idle       connects and sends nothing (a half-open scan, a stalled peer)
  halfopen   sends a real exchange message 1 (an ephemeral key and "nearcard/2") and then nothing
and keeps each open for up to HOLD seconds. Prints a JSON report: per kind, how many connections were
refused at connect, closed by the node (and how soon, median seconds), and still open at the end.

  flood.py HOST PORT --sources A,B,… --sustain SECONDS [--per-source 8] [--reconnect 0]

keeps PER_SOURCE half-open sessions open from every source address for SECONDS: each is reopened
RECONNECT seconds after the node closes it (0: at once). Prints a JSON report: connections opened,
closed by the node, refused (closed before a byte of message 2), and answered (message 2 came).
"""
import argparse
import asyncio
import json
import os
import signal
import statistics
import time

ap = argparse.ArgumentParser()
ap.add_argument("host")
ap.add_argument("port", type=int)
ap.add_argument("--sources", required=True)
ap.add_argument("--count", type=int, default=500)
ap.add_argument("--hold", type=float, default=14)
ap.add_argument("--kinds", default="garbage,slowloris,churn", help="which kinds, taken in turn")
ap.add_argument("--sustain", type=float, help="keep half-open sessions open for this many seconds")
ap.add_argument("--per-source", type=int, default=8)
ap.add_argument("--reconnect", type=float, default=0)
args = ap.parse_args()


def message1():
    """Noise XX message 1 of an exchange (docs/PROTOCOL.md §5): an ephemeral key and the tag, framed."""
    body = os.urandom(32) + b"nearcard/2"
    return len(body).to_bytes(2, "big") + body
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
        elif kind == "halfopen":
            writer.write(message1())
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


async def sustain():
    tally = {"opened": 0, "closedByNode": 0, "refused": 0, "answered": 0, "connectFailed": 0}
    stop = {"at": time.monotonic() + args.sustain}
    # SIGTERM ends the flood early, with its report (a benchmark stops it when it has measured).
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, lambda: stop.update(at=time.monotonic()))

    def running():
        return time.monotonic() < stop["at"]

    async def slot(source):
        while running():
            try:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection(args.host, args.port, local_addr=(source, 0)), 5)
            except (OSError, asyncio.TimeoutError):
                tally["connectFailed"] += 1
                await asyncio.sleep(max(args.reconnect, 0.05))
                continue
            tally["opened"] += 1
            answered = False
            try:
                writer.write(message1())
                await writer.drain()
                while running():
                    try:
                        data = await asyncio.wait_for(reader.read(4096), 1.0)
                    except asyncio.TimeoutError:
                        continue
                    if not data:
                        break
                    answered = True
            except (ConnectionError, OSError):
                pass
            finally:
                writer.close()
            if running():
                tally["closedByNode"] += 1
                tally["answered" if answered else "refused"] += 1
            await asyncio.sleep(max(args.reconnect, 0.01))

    sources = args.sources.split(",")
    await asyncio.gather(*(slot(s) for s in sources for _ in range(args.per_source)))
    return tally


if args.sustain:
    print(json.dumps(asyncio.run(sustain())), flush=True)
    raise SystemExit(0)
asyncio.run(main())
for r in report.values():
    s = r.pop("closeSeconds")
    r["medianCloseSeconds"] = round(statistics.median(s), 2) if s else None
print(json.dumps(report))
