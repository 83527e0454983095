#!/usr/bin/env python3
"""A TCP relay that breaks a Nearcard session on purpose, at a frame boundary (the fault lab).

  fault_relay.py LISTEN_PORT TARGET_HOST TARGET_PORT [--cut-after K | --stall-after K --direction D]
                 [--delay MS] [--jitter MS] [--source ADDR] [--once]

It accepts connections on LISTEN_PORT (127.0.0.1; --listen-host to change) and relays each to TARGET, reading the
2-byte-length frames of docs/PROTOCOL.md §4 in both directions, so it can act between frames:
  --cut-after K     after K frames have gone through (both directions counted, in the order they
                    arrive), close both connections: the frames after never arrive (a dropped link).
  --stall-after K   after K frames, stop forwarding in DIRECTION ('to-listener' or 'to-dialer'),
                    keeping both connections open and silent (an outage, a frozen peer) for --hold s.
  --pause-after K   after K frames, hold every frame (both directions) until the file --resume-file
                    names exists; prints {"paused": K} once per connection as it starts to hold (the
                    fault lab freezes a database at a chosen step of the exchange this way).
  --delay/--jitter  one-way latency: each frame is forwarded this many milliseconds (uniform ±
                    jitter) after it arrived, in order, without holding up the frames behind it
                    (a slow link, not a slow relay: --delay 2500 both ways is a 5 s round trip).
--source ADDR connects to TARGET from ADDR (so a firewall rule can let the relay through and nothing
else). With --once it serves one connection and exits. Prints one JSON line per connection: frames seen
in each direction and whether it cut or stalled.
"""
import argparse
import asyncio
import json
import random
import socket

ap = argparse.ArgumentParser()
ap.add_argument("listen_port", type=int)
ap.add_argument("target_host")
ap.add_argument("target_port", type=int)
ap.add_argument("--cut-after", type=int)
ap.add_argument("--stall-after", type=int)
ap.add_argument("--direction", choices=["to-listener", "to-dialer"], default="to-listener")
ap.add_argument("--hold", type=float, default=40)
ap.add_argument("--delay", type=float, default=0)
ap.add_argument("--jitter", type=float, default=0)
ap.add_argument("--source")
ap.add_argument("--once", action="store_true")
ap.add_argument("--pause-after", type=int)
ap.add_argument("--resume-file")
ap.add_argument("--listen-host", default="127.0.0.1", help="the address to accept on (loopback unless told)")
args = ap.parse_args()


async def session(dialer_r, dialer_w):
    listener_r, listener_w = await asyncio.open_connection(
        args.target_host, args.target_port, local_addr=(args.source, 0) if args.source else None)
    state = {"frames": 0, "toListener": 0, "toDialer": 0, "cut": False, "stalled": None, "sequence": ""}
    done = asyncio.Event()

    def close_all():
        for w in (dialer_w, listener_w):
            try:
                w.transport.abort()
            except Exception:  # noqa: BLE001
                pass
        done.set()

    async def pump(reader, writer, name):
        buf = b""
        # Frames wait out the link's latency here, each from its own arrival (the link is a pipe).
        queue = asyncio.Queue()

        async def deliver():
            try:
                while True:
                    due, frame = await queue.get()
                    wait = due - asyncio.get_running_loop().time()
                    if wait > 0:
                        await asyncio.sleep(wait)
                    writer.write(frame)
                    await writer.drain()
                    queue.task_done()
            except (ConnectionError, OSError, asyncio.CancelledError):
                pass

        sender = asyncio.create_task(deliver()) if args.delay or args.jitter else None
        last_due = 0.0
        try:
            while not done.is_set():
                chunk = await reader.read(65536)
                if not chunk:
                    break
                buf += chunk
                while len(buf) >= 2 and len(buf) >= 2 + int.from_bytes(buf[:2], "big"):
                    n = 2 + int.from_bytes(buf[:2], "big")
                    frame, buf = buf[:n], buf[n:]
                    if args.cut_after is not None and state["frames"] >= args.cut_after:
                        state["cut"] = True
                        close_all()
                        return
                    if args.stall_after is not None and state["frames"] >= args.stall_after and name == args.direction:
                        if state["stalled"] is None:
                            state["stalled"] = state["frames"]
                            asyncio.get_running_loop().call_later(args.hold, close_all)
                        continue  # swallowed
                    if args.pause_after is not None and state["frames"] >= args.pause_after and not resumed.is_set():
                        if not state.get("paused"):
                            state["paused"] = True
                            print(json.dumps({"paused": state["frames"]}), flush=True)
                        await resumed.wait()
                    state["frames"] += 1
                    state["toListener" if name == "to-listener" else "toDialer"] += 1
                    state["sequence"] += ">" if name == "to-listener" else "<"
                    if sender:
                        latency = max(0, args.delay + random.uniform(-args.jitter, args.jitter)) / 1000
                        last_due = max(last_due, asyncio.get_running_loop().time() + latency)
                        queue.put_nowait((last_due, frame))
                    else:
                        writer.write(frame)
                        await writer.drain()
        except (ConnectionError, OSError):
            pass
        if sender:
            # What was on the wire still arrives, then the close follows it.
            try:
                await asyncio.wait_for(queue.join(), timeout=(args.delay + args.jitter) / 1000 + 5)
            except asyncio.TimeoutError:
                pass
            sender.cancel()
        # A side's close travels like its frames: swallowed while its direction is stalled (the other
        # side learns of it only when the outage ends), passed on otherwise.
        if state["stalled"] is not None and name == args.direction:
            return
        close_all()

    await asyncio.gather(pump(dialer_r, listener_w, "to-listener"), pump(listener_r, dialer_w, "to-dialer"))
    await done.wait()
    print(json.dumps(state), flush=True)


resumed = asyncio.Event()


async def watch_resume():
    import os
    if args.pause_after is None:
        return
    while not (args.resume_file and os.path.exists(args.resume_file)):
        await asyncio.sleep(0.02)
    resumed.set()


async def main():
    finished = asyncio.Event()
    asyncio.create_task(watch_resume())

    async def handle(r, w):
        await session(r, w)
        if args.once:
            finished.set()

    server = await asyncio.start_server(handle, host=args.listen_host, port=args.listen_port, family=socket.AF_INET)
    print(json.dumps({"listening": args.listen_port}), flush=True)
    async with server:
        if args.once:
            await finished.wait()
        else:
            await server.serve_forever()


asyncio.run(main())
