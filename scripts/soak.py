#!/usr/bin/python3
"""The soak run: one `nearcard listen` serving for an hour under honest and hostile traffic.

  scripts/soak.py [--minutes N] [--report FILE]        (`make soak`; SOAK_MINUTES=N, default 60)

One listener (`listen --jsonl --accept all --no-discovery`, as an ordinary user: when run as root every
`nearcard` and every test peer runs as the account nearcard-test, made on first use as the tests make it)
serves, for the whole run and interleaved:
  - honest exchanges (`exchange 127.0.0.1:PORT --yes`) from a rotating set of peers: a new peer appears
    every 20 s, and once six are about the oldest vanishes (its home is deleted after its last use);
  - follow-up messages from peers that hold the listener as a contact (`message`), each text unique;
  - every minute, a half-open flood (Tests/Interop/flood.py --sustain: 8 sessions from each of
    127.0.1.1…40 — 320, past the node's cap of 256, so its fair eviction works — that send exchange
    message 1 and then nothing, reopened as soon as the node closes them)
    and then an idle flood (96 silent sockets from 127.0.2.1…8), both over by second 45 of the minute;
  - exchanges through Tests/Interop/fault_relay.py: a link cut after a random frame, a slow link
    (300…900 ms each way, ±100 ms) and an outage (a direction stalled, then cut); after each the peer
    runs `outbox --send`, which settles an unconfirmed exchange.
Traffic goes to 127.x addresses only, plus the listener's route hints (this machine's own addresses,
which the kernel delivers over lo); discovery is off everywhere (no D-Bus for the peers either), so
nothing is sent on a real interface.

Every 10 s from the start, and at the end, it samples the listener process (the real nearcard, not runuser):
open fds, threads, VmRSS, RssAnon, and the size of nearcard.sqlite and nearcard.sqlite-wal in its home.
One line per sample on stdout; every sample and a final summary as JSON lines in --report (default
/tmp/nearcard-soak-report-STAMP.jsonl, kept; printed at the end), then a table: first, warm-up, max,
last of each figure.

Bounds, against the warm-up sample (the one after the first minute; the first sample when the run is
shorter than 2 minutes), over every sample from it on:
  fds       at most warm-up + 32          threads   at most warm-up + 8
  RssAnon   at most warm-up + 48 MiB      WAL       at most 64 MiB (any sample)
(fds only between floods: before each minute's flood and from 5 s after it is done; a flood holds up to
the node's cap of connections by design, and the summary says how many at most);
and: the listener must not exit before it is told to (then it must exit 0); no follow-up message the
sender's outbox reports delivered may be missing from the listener's inbox (`inbox --json`), and no text
may be there twice (nor arrive twice as a `message.received` event); no contact may be one-sided: for
every peer, when it vanishes and at the end for those still there, after `outbox --send`, the peer holds
the listener iff the listener holds the peer, and both hold the same exchange (its graph edge: a DID
alone would not see a book that kept an older exchange); every follow-up queued is delivered by the end.
Honest exchanges (direct, not through a faulty link) succeed: at least 99 % outside floods and 95 %
during them (judged from 20 attempts in a class). Any exchange may otherwise fail only with a network
outcome (exit 7, 8, 9, 10 or 11: counted; through a faulty link they are expected), never with another
code (1 a check, 5 storage, 70 internal, a hang past its deadline…); other commands must exit 0
(`message`: 0, or 1 when it failed for good, counted).

`--fault NAME` (a debug build only: NEARCARD_TEST_FAULT in the listener's environment) runs a listener
broken on purpose — decline (one exchange in ten declined), stale-edge (an older exchange's edge kept),
hold-messages (every message answered busy), leak (a descriptor per connection), no-eviction (a full
node refuses instead of evicting) — and the run must fail with the violation that fault causes
(`make soak-faults` runs each: proof that the soak can fail a broken node).

The binary (.build/debug/nearcard, or $NEARCARD) is copied at start, so the tree may be rebuilt while
this runs; it never builds. Everything lives in one temporary directory, removed at the end, also after
Ctrl-C or SIGTERM (every child is killed first).

Exit codes: 0 every bound held; 1 a bound was broken (one line each on stderr); 2 it could not start
(no binary: run `swift build`; no account; the listener would not start); 130 interrupted.
"""

import argparse
import collections
import json
import math
import os
import pwd
import random
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ACCOUNT = "nearcard-test"
LISTENER_NAME = "Soak Node"
MIB = 1024 * 1024

# The bounds (docstring). Growth is measured from the warm-up sample.
WARMUP_SECONDS = 60
FD_GROWTH = 32
THREAD_GROWTH = 8
RSS_ANON_GROWTH = 48 * MIB
WAL_LIMIT = 64 * MIB

# Exit codes of `exchange` that a flood, a faulty link or a busy node may cause (README, "Exit codes").
NETWORK_OUTCOMES = {7, 8, 9, 10, 11}
# Per-command deadlines: past them a command is hung, which is a failure.
EXCHANGE_DEADLINE = 150
COMMAND_DEADLINE = 60

# The workload's pace.
PEER_EVERY = 20          # seconds between two new peers
PEERS_KEPT = 6           # past this many, the oldest vanishes
FIRST_PEERS = 4
FLOOD_START = 3          # seconds into each minute
HALF_OPEN_SECONDS = 25
# 40 sources × 8: 320 half-open connections, past the node's cap of 256 (NodeLimits.maximumSessions), so
# the cap's fair eviction is exercised, not only the per-address limit of 8.
HALF_OPEN_SOURCES = [f"127.0.1.{i}" for i in range(1, 41)]
HALF_OPEN_PER_SOURCE = 8
NODE_CAP = 256
IDLE_SOURCES = [f"127.0.2.{i}" for i in range(1, 9)]
IDLE_COUNT = 96
IDLE_HOLD = 12
FLOODS_DONE_BY = 45      # both floods are over by this second of the minute, before the next sample
RELAY_SOURCE = "127.0.0.2"
SAMPLE_EVERY = 10        # seconds between two samples, from the start

# Honest exchanges (direct, not through a faulty link) that must succeed: a node that answers them with
# exit 7, 8, 9, 10 or 11 is broken, however "network" those codes look.
HONEST_SUCCESS = 0.99
HONEST_SUCCESS_DURING_FLOODS = 0.95
# Fewer attempts than this in a class and its rate is noted, not judged (a run of a minute or two).
RATE_MINIMUM_ATTEMPTS = 20

# The faults a debug build can be given (NEARCARD_TEST_FAULT, Sources/NearcardNode/TestFault.swift), and
# the violation each must cause: `--fault NAME` runs the listener with one, and the run must fail so.
FAULTS = {"decline": "success", "stale-edge": "one-sided", "hold-messages": "undelivered", "leak": "bound",
          "no-eviction": "success"}


def fail_start(message):
    print(f"soak: {message}", file=sys.stderr)
    raise SystemExit(2)


class Interrupted(Exception):
    """The run is closing: no new child may start."""


class Peer:
    """One peer's home; used by one worker at a time (its lock)."""

    def __init__(self, number, home, did):
        self.number = number
        self.name = f"Soak Peer {number:04d}"
        self.home = home
        self.did = did
        self.lock = threading.Lock()
        self.has_listener = False
        self.retiring = False


class Soak:
    """The listener, the peers, the workers that drive them, and what they saw."""

    def __init__(self, minutes, report_path, fault=None):
        self.minutes = minutes
        self.fault = fault
        self.report_path = report_path
        self.stop = threading.Event()
        self.closing = False
        self.children = set()
        self.children_lock = threading.Lock()
        self.lock = threading.Lock()  # guards everything below
        self.violations = collections.OrderedDict()  # kind -> [lines]
        self.notes = []
        self.samples = []
        self.peers = []
        self.peer_count = 0
        self.retired = 0
        self.checked_pairs = 0
        self.messages = {}  # outbox id -> {"text", "peer", "state"}
        self.message_failures = 0
        self.message_seq = 0
        self.exchanges = collections.Counter()  # (path, rc) -> count; path: direct, direct-flood, cut, slow, outage
        self.flood_tally = {"half-open": collections.Counter(), "idle": collections.Counter()}
        self.flood_runs = collections.Counter()
        self.flooding = 0
        self.flood_epoch = 0
        self.settles = 0
        self.events = collections.Counter()
        self.probed = 0
        self.received = collections.Counter()  # message id -> message.received events
        self.error_events = []
        self.listener_tail = collections.deque(maxlen=20)
        self.listener_quit = False
        self.listener_rc = None
        self.run_id = f"{int(time.time()) % 100000:05d}"

    # ---- set-up ---------------------------------------------------------------------------------------

    def setup(self):
        source = os.environ.get("NEARCARD") or os.path.join(REPO, ".build", "debug", "nearcard")
        if not os.access(source, os.X_OK):
            fail_start(f"no nearcard binary at {source}: run `swift build` first (or set NEARCARD)")
        self.root = os.geteuid() == 0
        self.prefix = []
        if self.root:
            self.account = self.ensure_account()
            self.prefix = ["runuser", "-u", ACCOUNT, "--"]
        self.tmp = tempfile.mkdtemp(prefix="nearcard-soak-")
        os.chmod(self.tmp, 0o755)
        for d in ("bin", "tools", "peers"):
            os.mkdir(os.path.join(self.tmp, d), 0o755)
            os.chmod(os.path.join(self.tmp, d), 0o755)
        self.binary = os.path.join(self.tmp, "bin", "nearcard")
        shutil.copy2(source, self.binary)
        os.chmod(self.binary, 0o755)
        for tool in ("flood.py", "fault_relay.py"):
            shutil.copy2(os.path.join(REPO, "Tests", "Interop", tool), os.path.join(self.tmp, "tools", tool))
            os.chmod(os.path.join(self.tmp, "tools", tool), 0o755)
        self.python = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
        # The peers' and the listener's environment: no inherited home or store, and no D-Bus, so no
        # command browses or announces on the machine's real interfaces.
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("NEARCARD_") and k != "PGPASSWORD"}
        self.env["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=/nonexistent/nearcard-soak-bus"
        self.report = open(self.report_path, "w", encoding="utf-8")

    @staticmethod
    def ensure_account():
        try:
            return pwd.getpwnam(ACCOUNT)
        except KeyError:
            subprocess.run(["/usr/sbin/useradd", "--create-home", "--user-group", "--shell", "/bin/sh",
                            "--comment", "Nearcard tests (unprivileged)", ACCOUNT], capture_output=True)
        try:
            return pwd.getpwnam(ACCOUNT)
        except KeyError:
            fail_start(f"running as root, but the account {ACCOUNT} does not exist and could not be made")

    def make_home(self, path):
        os.mkdir(path, 0o700)
        if self.root:
            os.chown(path, self.account.pw_uid, self.account.pw_gid)

    # ---- children -------------------------------------------------------------------------------------

    def spawn(self, argv, env=None, **kw):
        with self.children_lock:
            if self.closing:
                raise Interrupted()
            p = subprocess.Popen(self.prefix + argv, env=env or self.env, cwd=self.tmp, start_new_session=True, **kw)
            self.children.add(p)
        return p

    def forget(self, p):
        with self.children_lock:
            self.children.discard(p)

    @staticmethod
    def kill(p, sig=signal.SIGKILL):
        try:
            os.killpg(p.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def kill_all(self):
        with self.children_lock:
            self.closing = True
            children = list(self.children)
        for p in children:
            self.kill(p, signal.SIGTERM)
        deadline = time.monotonic() + 3
        for p in children:
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            self.kill(p)
            try:
                p.wait(2)
            except subprocess.TimeoutExpired:
                pass

    def nearcard(self, args, home, deadline=COMMAND_DEADLINE):
        """Runs one nearcard command; returns (rc, stdout, stderr, seconds). rc is None when it hung."""
        t0 = time.monotonic()
        p = self.spawn([self.binary] + args + ["--home", home], stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            out, err = p.communicate(timeout=deadline)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            self.kill(p)
            out, err = p.communicate()
            rc = None
        finally:
            self.forget(p)
        return rc, out.decode(errors="replace"), err.decode(errors="replace"), time.monotonic() - t0

    def violation(self, kind, line):
        with self.lock:
            self.violations.setdefault(kind, []).append(line)

    def must(self, what, result, ok=(0,)):
        rc, out, err, _ = result
        if rc not in ok:
            detail = "hung past its deadline" if rc is None else f"exit {rc}"
            self.violation("command", f"`nearcard {what}` {detail}: {err.strip().splitlines()[-1] if err.strip() else '(no message)'}")
            return False
        return True

    # ---- the listener ---------------------------------------------------------------------------------

    def start_listener(self):
        self.home = os.path.join(self.tmp, "listener")
        self.make_home(self.home)
        r = self.nearcard(["init", "--name", LISTENER_NAME, "--no-passphrase", "--json"], self.home)
        if r[0] != 0:
            fail_start(f"nearcard init for the listener failed (exit {r[0]}): {r[2].strip()}")
        self.listener_did = json.loads(r[1])["did"]
        r = self.nearcard(["card", "set", "--name", LISTENER_NAME, "--company", "Soak"], self.home)
        if r[0] != 0:
            fail_start(f"nearcard card set for the listener failed (exit {r[0]}): {r[2].strip()}")
        self.listener_err = open(os.path.join(self.tmp, "listener.stderr"), "wb")
        self.listener = self.spawn(
            [self.binary, "listen", "--jsonl", "--accept", "all", "--no-discovery", "--port", "0",
             "--probe-summary", "30", "--home", self.home],
            env=dict(self.env, NEARCARD_TEST_FAULT=self.fault) if self.fault else None,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.listener_err)
        self.started = threading.Event()
        self.port = None
        threading.Thread(target=self.read_listener, daemon=True).start()
        if not self.started.wait(30) or self.port is None:
            fail_start("the listener did not start within 30 s: " + " | ".join(self.listener_tail))
        self.pid = self.real_pid()

    def real_pid(self):
        """The nearcard process itself: runuser's child when we are root."""
        if not self.prefix:
            return self.listener.pid
        for _ in range(50):
            try:
                with open(f"/proc/{self.listener.pid}/task/{self.listener.pid}/children") as f:
                    kids = f.read().split()
                if kids:
                    return int(kids[0])
            except OSError:
                pass
            time.sleep(0.1)
        fail_start("cannot find the listener's nearcard process under runuser")

    def read_listener(self):
        for raw in self.listener.stdout:
            line = raw.decode(errors="replace").rstrip("\n")
            self.listener_tail.append(line[:300])
            try:
                e = json.loads(line)
            except ValueError:
                self.violation("listener", f"the listener wrote a line that is not JSON: {line[:200]}")
                continue
            name = e.get("event")
            with self.lock:
                self.events[name] += 1
                if name == "connections.probed":
                    self.probed += e.get("count", 0)
                elif name == "message.received":
                    self.received[e.get("id")] += 1
                elif name == "error":
                    self.error_events.append(e.get("message"))
            if name == "started":
                self.port = e.get("port")
                self.started.set()
        rc = self.listener.wait()
        with self.lock:
            self.listener_rc = rc
            quit_asked = self.listener_quit
        if not quit_asked:
            err = open(os.path.join(self.tmp, "listener.stderr"), errors="replace").read().strip()
            self.violation("listener", f"the listener exited (exit {rc}) during the run: "
                           + (err.splitlines()[-1] if err else " | ".join(list(self.listener_tail)[-3:])))
            self.stop.set()
        self.started.set()

    def stop_listener(self):
        with self.lock:
            self.listener_quit = True
        try:
            self.listener.stdin.write(b'{"cmd":"quit"}\n')
            self.listener.stdin.flush()
        except (BrokenPipeError, OSError):
            pass
        try:
            rc = self.listener.wait(30)
        except subprocess.TimeoutExpired:
            self.violation("listener", "the listener did not stop within 30 s of a quit command")
            self.kill(self.listener)
            rc = self.listener.wait()
        self.forget(self.listener)
        if rc != 0:
            self.violation("listener", f"the listener exited {rc} on quit (0 expected)")

    # ---- samples --------------------------------------------------------------------------------------

    def sample(self, label):
        s = {"kind": "sample", "label": label, "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
             "elapsed": round(time.monotonic() - self.t0, 1)}
        try:
            try:
                s["fds"] = len(os.listdir(f"/proc/{self.pid}/fd"))
            except PermissionError:
                # The node makes itself non-dumpable (its keys), so only root may list its fds.
                s["fds"] = None
            with open(f"/proc/{self.pid}/status") as f:
                status = dict(line.split(":", 1) for line in f if ":" in line)
            s["threads"] = int(status["Threads"])
            s["rss"] = int(status["VmRSS"].split()[0]) * 1024
            s["rssAnon"] = int(status["RssAnon"].split()[0]) * 1024
            with open(f"/proc/{self.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            s["cpuSeconds"] = round((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), 1)
        except (OSError, KeyError, ValueError):
            self.violation("listener", f"the listener process {self.pid} is gone at the {label} sample")
            return None
        for key, name in (("sqlite", "nearcard.sqlite"), ("wal", "nearcard.sqlite-wal")):
            try:
                s[key] = os.path.getsize(os.path.join(self.home, name))
            except OSError:
                s[key] = 0
        with self.lock:
            s["exchangesCompleted"] = self.events["exchange.completed"]
            s["messagesReceived"] = self.events["message.received"]
            s["peers"] = len(self.peers)
            self.samples.append(s)
        self.report.write(json.dumps(s) + "\n")
        self.report.flush()
        m = int(s["elapsed"] // 60)
        fds = "   ?" if s["fds"] is None else f"{s['fds']:4d}"
        print(f"[{m:3d}:{int(s['elapsed'] % 60):02d} {label:>7}] fds {fds}  threads {s['threads']:3d}  "
              f"rss {s['rss'] / MIB:6.1f} MiB  anon {s['rssAnon'] / MIB:6.1f} MiB  sqlite {s['sqlite'] / MIB:5.2f} MiB  "
              f"wal {s['wal'] / MIB:5.2f} MiB  cpu {s['cpuSeconds']:7.1f} s  | exchanges {s['exchangesCompleted']}, "
              f"messages {s['messagesReceived']}, peers {s['peers']}", flush=True)
        return s

    # ---- peers ----------------------------------------------------------------------------------------

    def new_peer(self):
        with self.lock:
            self.peer_count += 1
            number = self.peer_count
        home = os.path.join(self.tmp, "peers", f"p{number:04d}")
        self.make_home(home)
        name = f"Soak Peer {number:04d}"
        r = self.nearcard(["init", "--name", name, "--no-passphrase", "--json"], home)
        if not self.must("init (a peer)", r):
            return None
        peer = Peer(number, home, json.loads(r[1])["did"])
        r = self.nearcard(["card", "set", "--name", name, "--email", f"peer{number}@example.org",
                           "--company", "Soak Peers", "--title", "Peer"], home)
        if not self.must("card set (a peer)", r):
            return None
        with self.lock:
            self.peers.append(peer)
        return peer

    def acquire(self, want=lambda p: True, wait=True):
        """A peer no other worker is using (and that is not vanishing), locked; None once stopping (or,
        without `wait`, when none is free now)."""
        while not self.stop.is_set():
            with self.lock:
                candidates = [p for p in self.peers if not p.retiring and want(p)]
            random.shuffle(candidates)
            for p in candidates:
                if p.lock.acquire(blocking=False):
                    if p.retiring:
                        p.lock.release()
                        continue
                    return p
            if not wait:
                return None
            self.stop.wait(0.2)
        return None

    def settle(self, peer):
        """`outbox --send` for one peer (locked by the caller): delivers what is queued, settles an
        unconfirmed exchange; then refreshes what the peer holds."""
        r = self.nearcard(["outbox", "--send", "--all", "--json", "--wait", "2"], peer.home)
        with self.lock:
            self.settles += 1
        if self.must("outbox --send", r):
            self.update_messages(r[1])
        self.refresh_contact(peer)

    def update_messages(self, text):
        try:
            items = json.loads(text)
        except ValueError:
            self.violation("command", f"`nearcard outbox --json` printed no JSON: {text[:200]}")
            return
        with self.lock:
            for item in items:
                m = self.messages.get(item.get("id"))
                if m is not None:
                    m["state"] = item.get("state")

    def peer_contacts(self, home):
        r = self.nearcard(["contacts", "--json"], home)
        if not self.must("contacts --json", r):
            return None
        return {c.get("didPublicKey"): c for c in json.loads(r[1])}

    def refresh_contact(self, peer):
        book = self.peer_contacts(peer.home)
        if book is not None:
            peer.has_listener = self.listener_did in book

    def check_pair(self, peer, listener_book, when):
        """The peer holds the listener iff the listener holds the peer (after a settle)."""
        book = self.peer_contacts(peer.home)
        if book is None or listener_book is None:
            return True
        mine = self.listener_did in book
        theirs = peer.did in listener_book
        with self.lock:
            self.checked_pairs += 1
        if mine != theirs:
            flag = " (unconfirmed)" if mine and book[self.listener_did].get("unconfirmed") else ""
            return f"{peer.name} {'holds' if mine else 'lacks'} the listener{flag}, the listener " \
                   f"{'holds' if theirs else 'lacks'} {peer.name} ({when}, after outbox --send)"
        if mine:
            # Both hold each other: from the same exchange (its graph edge), or the books disagree.
            ours, their = book[self.listener_did].get("graphExportEdgeId"), listener_book[peer.did].get("graphExportEdgeId")
            if ours != their:
                return f"{peer.name} holds the listener from exchange {ours}, the listener holds {peer.name} " \
                       f"from exchange {their} ({when}, after outbox --send)"
        return True

    def retire(self, peer):
        """The peer vanishes: once its last use is over, it settles, is checked, and its home is deleted."""
        peer.retiring = True
        while not peer.lock.acquire(timeout=1):
            if self.stop.is_set():
                peer.retiring = False
                return
        try:
            self.settle(peer)
            verdict = self.check_pair(peer, self.peer_contacts(self.home), "when it vanished")
            if verdict is not True:
                time.sleep(3)
                self.settle(peer)
                verdict = self.check_pair(peer, self.peer_contacts(self.home), "when it vanished")
                if verdict is not True:
                    self.violation("one-sided", verdict)
            with self.lock:
                self.peers.remove(peer)
                self.retired += 1
            shutil.rmtree(peer.home, ignore_errors=True)
        finally:
            peer.lock.release()

    # ---- workers --------------------------------------------------------------------------------------

    def worker(self, body):
        def run():
            try:
                while not self.stop.is_set():
                    body()
            except Interrupted:
                pass
            except Exception as error:  # noqa: BLE001 — a bug of this script: say so and stop the run
                self.violation("script", f"soak worker {body.__name__} failed: {error!r}")
                self.stop.set()
        t = threading.Thread(target=run, name=body.__name__, daemon=True)
        t.start()
        return t

    def flood_state(self):
        with self.lock:
            return self.flooding, self.flood_epoch

    def record_exchange(self, path, r, before):
        rc = r[0]
        after = self.flood_state()
        if path == "direct" and (before[0] or after[0] or before[1] != after[1]):
            path = "direct-flood"
        with self.lock:
            self.exchanges[(path, rc)] += 1
        if rc not in NETWORK_OUTCOMES and rc != 0:
            detail = "hung past its deadline" if rc is None else f"exit {rc}"
            last = r[2].strip().splitlines()[-1] if r[2].strip() else "(no message)"
            self.violation("exchange", f"an exchange ({path}) ended with {detail}, not a network outcome: {last}")

    def honest_exchanges(self):
        """A peer exchanges with the listener (new peers first, then again at random)."""
        peer = self.acquire(lambda p: not p.has_listener, wait=False) or self.acquire()
        if peer is None:
            return
        try:
            before = self.flood_state()
            r = self.nearcard(["exchange", f"127.0.0.1:{self.port}", "--yes", "--json"], peer.home, EXCHANGE_DEADLINE)
            self.record_exchange("direct", r, before)
            if r[0] == 0:
                peer.has_listener = True
            elif r[0] in NETWORK_OUTCOMES:
                self.settle(peer)
        finally:
            peer.lock.release()
        self.stop.wait(random.uniform(0.5, 1.5))

    def follow_ups(self):
        """A peer that holds the listener writes to it; the text is unique to the run."""
        peer = self.acquire(lambda p: p.has_listener)
        if peer is None:
            return
        try:
            with self.lock:
                self.message_seq += 1
                text = f"soak-{self.run_id}-{self.message_seq:06d} from {peer.name}"
            r = self.nearcard(["message", self.listener_did, text, "--json", "--wait", "2"], peer.home)
            if r[0] == 0:
                item = json.loads(r[1])
                with self.lock:
                    self.messages[item["id"]] = {"text": text, "peer": peer.name, "state": item.get("state")}
                if item.get("state") != "delivered":
                    self.settle(peer)
            elif r[0] == 1:
                with self.lock:
                    self.message_failures += 1
            else:
                self.must("message", r)
        finally:
            peer.lock.release()
        self.stop.wait(random.uniform(0.8, 2.0))

    def faulty_links(self):
        """An exchange through fault_relay.py: cut, slow, or an outage; then the peer settles."""
        kinds = ["cut", "slow", "outage"]
        kind = kinds[getattr(self, "_link_turn", 0) % len(kinds)]
        self._link_turn = getattr(self, "_link_turn", 0) + 1
        if kind == "cut":
            extra = ["--cut-after", str(random.randint(0, 12))]
        elif kind == "slow":
            extra = ["--delay", str(random.randint(300, 900)), "--jitter", "100"]
        else:
            extra = ["--stall-after", str(random.randint(1, 11)), "--direction",
                     random.choice(["to-listener", "to-dialer"]), "--hold", "6"]
        peer = self.acquire()
        if peer is None:
            return
        relay = None
        try:
            relay, relay_port = self.start_relay(extra)
            if relay is None:
                self.notes.append("a fault relay did not start (its port was taken?)")
                return
            before = self.flood_state()
            r = self.nearcard(["exchange", f"127.0.0.1:{relay_port}", "--yes", "--json"], peer.home, EXCHANGE_DEADLINE)
            self.record_exchange(kind, r, before)
            try:
                relay.wait(15)
            except subprocess.TimeoutExpired:
                self.kill(relay)
                relay.wait()
            self.settle(peer)
        finally:
            if relay is not None:
                self.kill(relay)
                self.forget(relay)
            peer.lock.release()
        self.stop.wait(random.uniform(1.0, 3.0))

    def start_relay(self, extra):
        for _ in range(5):
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            relay = self.spawn([self.python, os.path.join(self.tmp, "tools", "fault_relay.py"), str(port),
                                "127.0.0.1", str(self.port), "--source", RELAY_SOURCE, "--once"] + extra,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            ready, _, _ = select.select([relay.stdout], [], [], 10)
            if ready and b"listening" in relay.stdout.readline():
                return relay, port
            self.kill(relay)
            relay.wait()
            self.forget(relay)
        return None, None

    def floods(self):
        """Each minute: a half-open flood, then an idle one, both over before the next sample."""
        now = time.monotonic() - self.t0
        minute = math.floor(now / 60)
        start = minute * 60 + FLOOD_START
        if now > start:  # too late for this minute's window
            minute += 1
            start = minute * 60 + FLOOD_START
        if minute * 60 + FLOODS_DONE_BY + 5 > self.minutes * 60:
            self.stop.wait(max(0.0, start - now))
            return
        if self.stop.wait(max(0.0, start - now)):
            return
        self.flood("half-open", ["--sources", ",".join(HALF_OPEN_SOURCES), "--sustain", str(HALF_OPEN_SECONDS),
                                 "--per-source", str(HALF_OPEN_PER_SOURCE), "--reconnect", "0"])
        if self.stop.is_set():
            return
        self.flood("idle", ["--sources", ",".join(IDLE_SOURCES), "--kinds", "idle", "--count", str(IDLE_COUNT),
                            "--hold", str(IDLE_HOLD)])

    def flood(self, kind, extra):
        with self.lock:
            self.flooding += 1
            self.flood_epoch += 1
        deadline = self.t0 + (math.floor((time.monotonic() - self.t0) / 60) * 60) + FLOODS_DONE_BY
        p = self.spawn([self.python, os.path.join(self.tmp, "tools", "flood.py"), "127.0.0.1", str(self.port)] + extra,
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            out, err = p.communicate(timeout=max(5.0, deadline - time.monotonic() + 10))
        except subprocess.TimeoutExpired:
            self.kill(p)
            out, err = p.communicate()
        finally:
            self.forget(p)
            with self.lock:
                self.flooding -= 1
        with self.lock:
            self.flood_runs[kind] += 1
            try:
                report = json.loads(out.decode().strip().splitlines()[-1])
            except (ValueError, IndexError):
                if not self.stop.is_set():
                    self.notes.append(f"a {kind} flood printed no report (exit {p.returncode}): {err.decode()[-200:]}")
                return
            if kind == "idle":
                report = report.get("idle", {})
                report.pop("medianCloseSeconds", None)
            for k, v in report.items():
                if isinstance(v, int):
                    self.flood_tally[kind][k] += v

    def churn(self):
        """A new peer every PEER_EVERY seconds; past PEERS_KEPT, the oldest vanishes."""
        if self.stop.wait(PEER_EVERY):
            return
        self.new_peer()
        with self.lock:
            live = [p for p in self.peers if not p.retiring]
        if len(live) > PEERS_KEPT:
            self.retire(live[0])

    # ---- the run --------------------------------------------------------------------------------------

    def run(self):
        self.t0 = time.monotonic()
        print(f"soak: {self.minutes:g} min; listener {LISTENER_NAME} on 127.0.0.1:{self.port} (pid {self.pid}"
              f"{', as ' + ACCOUNT if self.root else ''}); report {self.report_path}", flush=True)
        self.sample("start")
        for _ in range(FIRST_PEERS):
            self.new_peer()
        threads = [self.worker(b) for b in (self.honest_exchanges, self.follow_ups, self.faulty_links,
                                            self.floods, self.churn)]
        end = self.t0 + self.minutes * 60
        tick = 1
        while not self.stop.is_set():
            due = self.t0 + tick * SAMPLE_EVERY
            if due >= end:
                self.stop.wait(max(0.0, end - time.monotonic()))
                break
            if self.stop.wait(max(0.0, due - time.monotonic())):
                break
            flooding = self.flood_state()[0] > 0
            self.sample("warm-up" if tick * SAMPLE_EVERY == WARMUP_SECONDS and self.minutes >= 2
                        else ("flood" if flooding else "sample"))
            tick += 1
        aborted = self.stop.is_set() and time.monotonic() < end - 1
        self.stop.set()
        for t in threads:
            t.join(EXCHANGE_DEADLINE + 30)
        if aborted and self.listener_rc is not None:
            return
        # The end: every peer still here settles, the last sample, then the books are compared.
        for peer in list(self.peers):
            with peer.lock:
                self.settle(peer)
        self.sample("end")
        self.final_checks()

    def final_checks(self):
        self.stop_listener()
        self.listener_err.close()
        with open(os.path.join(self.tmp, "listener.stderr"), errors="replace") as f:
            err = f.read().strip().splitlines()
        if err:
            self.notes.append(f"the listener wrote {len(err)} line(s) on stderr, the last: {err[-1][:200]}")
        r = self.nearcard(["inbox", "--json"], self.home)
        inbox = json.loads(r[1]) if self.must("inbox --json (the listener)", r) else []
        listener_book = self.peer_contacts(self.home)
        with self.lock:
            peers = list(self.peers)
        for peer in peers:
            verdict = self.check_pair(peer, listener_book, "at the end")
            if verdict is not True:
                self.violation("one-sided", verdict)
        texts = collections.Counter(m.get("text") for m in inbox)
        ids = {m.get("id") for m in inbox}
        with self.lock:
            for text, n in texts.items():
                if n > 1:
                    self.violations.setdefault("doubled", []).append(f"the listener's inbox holds {text!r} {n} times")
            for mid, n in self.received.items():
                if n > 1:
                    self.violations.setdefault("doubled", []).append(f"message {mid} arrived {n} times (message.received events)")
            for mid, m in self.messages.items():
                if m["state"] == "delivered" and (mid not in ids or m["text"] not in texts):
                    self.violations.setdefault("lost", []).append(
                        f"{m['text']!r} ({mid}) was reported delivered by {m['peer']}'s outbox but is not in the listener's inbox")
            self.inbox_count = len(inbox)
            sent = set(m["text"] for m in self.messages.values())
            strangers = [t for t in texts if t not in sent]
            if strangers:
                self.notes.append(f"{len(strangers)} message(s) in the listener's inbox were not sent by this run: {strangers[:3]}")
            undelivered_arrived = [m for mid, m in self.messages.items() if m["state"] != "delivered" and mid in ids]
            if undelivered_arrived:
                self.notes.append(f"{len(undelivered_arrived)} message(s) arrived although their sender's outbox "
                                  f"still says {sorted(set(m['state'] for m in undelivered_arrived))}")
            # Every follow-up queued is delivered by the end (each sender ran `outbox --send` last).
            for mid, m in self.messages.items():
                if m["state"] != "delivered" and mid not in ids:
                    self.violations.setdefault("undelivered", []).append(
                        f"{m['text']!r} ({mid}) from {m['peer']} is still {m['state']} at the end, after outbox --send")
        self.honest_rates()

    def honest_rates(self):
        """Honest exchanges succeed: a node that answers them with network outcomes is broken."""
        with self.lock:
            tally = collections.defaultdict(collections.Counter)
            for (path, rc), n in self.exchanges.items():
                if path in ("direct", "direct-flood"):
                    tally[path]["ok" if rc == 0 else "failed"] += n
        self.rates = {}
        for path, floor, words in (("direct", HONEST_SUCCESS, "outside floods"),
                                   ("direct-flood", HONEST_SUCCESS_DURING_FLOODS, "during floods")):
            c = tally.get(path, collections.Counter())
            attempts = c["ok"] + c["failed"]
            if attempts == 0:
                continue
            rate = c["ok"] / attempts
            self.rates[path] = {"attempts": attempts, "succeeded": c["ok"], "rate": round(rate, 4)}
            if attempts < RATE_MINIMUM_ATTEMPTS:
                self.notes.append(f"honest exchanges {words}: {c['ok']}/{attempts}, too few to judge (< {RATE_MINIMUM_ATTEMPTS})")
            elif rate < floor:
                self.violation("success", f"honest exchanges {words}: {c['ok']}/{attempts} succeeded "
                               f"({rate * 100:.1f} %, at least {floor * 100:.0f} % required)")

    # ---- the verdict ----------------------------------------------------------------------------------

    def bounds(self):
        if not self.samples:
            return
        # Shorter than 2 minutes: no sample comes after a warm-up, so growth is measured from the start.
        warm = next((s for s in self.samples if s["label"] == "warm-up"), self.samples[0])
        self.warm = warm
        after = self.samples[self.samples.index(warm):]
        if warm["fds"] is None:
            self.notes.append("open fds not measured: the node is not dumpable, so only root can list them")
        # Open fds are judged between floods (a flood holds up to the cap's 256 connections by design):
        # at the start of each minute before the flood, from 5 s after the floods are done, and at the end.
        def quiet(s):
            second = s["elapsed"] % 60
            return s["label"] in ("start", "warm-up", "end") or second < FLOOD_START or second >= FLOODS_DONE_BY + 5
        for key, growth, unit in (("fds", FD_GROWTH, ""), ("threads", THREAD_GROWTH, ""), ("rssAnon", RSS_ANON_GROWTH, " MiB")):
            if warm[key] is None:
                continue
            judged = [s for s in after if quiet(s)] if key == "fds" else after
            if not judged:
                continue
            top = max(judged, key=lambda s: s[key])
            if top[key] > warm[key] + growth:
                f = (lambda v: f"{v / MIB:.1f}") if unit else str
                self.violation("bound", f"{key}: {f(top[key])}{unit} at {top['elapsed']:.0f} s, more than warm-up "
                               f"{f(warm[key])}{unit} + {f(growth)}{unit}")
        # The half-open flood must reach the node's cap (else fair eviction was never exercised).
        flood_fds = [s["fds"] for s in self.samples if s["label"] == "flood" and s["fds"] is not None]
        if len(flood_fds) >= 3 and max(flood_fds) < NODE_CAP:
            self.violation("flood", f"the floods never brought the listener to its cap of {NODE_CAP} connections "
                           f"(at most {max(flood_fds)} fds in {len(flood_fds)} samples during floods)")
        top = max(self.samples, key=lambda s: s["wal"])
        if top["wal"] > WAL_LIMIT:
            self.violation("bound", f"wal: {top['wal'] / MIB:.1f} MiB at {top['elapsed']:.0f} s, more than {WAL_LIMIT / MIB:.0f} MiB")

    def summary(self):
        print()
        if self.samples:
            warm = getattr(self, "warm", self.samples[0])
            rows = [("fds", "fds", 1, f"warm-up + {FD_GROWTH}"), ("threads", "threads", 1, f"warm-up + {THREAD_GROWTH}"),
                    ("RSS (MiB)", "rss", MIB, "-"), ("RssAnon (MiB)", "rssAnon", MIB, f"warm-up + {RSS_ANON_GROWTH // MIB}"),
                    ("SQLite (MiB)", "sqlite", MIB, "-"), ("WAL (MiB)", "wal", MIB, f"{WAL_LIMIT // MIB}"),
                    ("CPU (s)", "cpuSeconds", 1, "-")]
            print(f"{'figure':<15}{'first':>10}{'warm-up':>10}{'max':>10}{'last':>10}   bound")
            for label, key, scale, bound in rows:
                if any(s[key] is None for s in self.samples):
                    print(f"{label:<15}{'not measured (root only)':>40}   {bound}")
                    continue
                vals = [s[key] / scale for s in self.samples]
                fmt = (lambda v: f"{v:10.0f}") if scale == 1 and key != "cpuSeconds" else (lambda v: f"{v:10.2f}")
                print(f"{label:<15}{fmt(vals[0])}{fmt(warm[key] / scale)}{fmt(max(vals))}{fmt(vals[-1])}   {bound}")
        print()
        by_path = collections.defaultdict(collections.Counter)
        for (path, rc), n in self.exchanges.items():
            by_path[path]["hung" if rc is None else rc] += n
        names = {"direct": "direct, no flood", "direct-flood": "direct, during a flood", "cut": "link cut",
                 "slow": "slow link", "outage": "outage"}
        for path in ("direct", "direct-flood", "cut", "slow", "outage"):
            c = by_path.get(path)
            if c:
                parts = ", ".join(f"exit {k}: {v}" for k, v in sorted(c.items(), key=lambda kv: str(kv[0])))
                print(f"exchanges {names[path]:<24} {sum(c.values()):5d}  ({parts})")
        states = collections.Counter(m["state"] for m in self.messages.values())
        print(f"follow-ups sent {len(self.messages) + self.message_failures}: "
              + ", ".join(f"{k} {v}" for k, v in sorted(states.items()))
              + f", failed for good {self.message_failures}; in the listener's inbox {getattr(self, 'inbox_count', '?')}")
        for kind in ("half-open", "idle"):
            c = self.flood_tally[kind]
            print(f"{kind} floods {self.flood_runs[kind]}: " + ", ".join(f"{k} {v}" for k, v in c.items()))
        for path, r in getattr(self, "rates", {}).items():
            print(f"honest exchanges {'during floods' if path == 'direct-flood' else 'outside floods'}: "
                  f"{r['succeeded']}/{r['attempts']} ({r['rate'] * 100:.1f} %)")
        flood_fds = [s["fds"] for s in self.samples if s.get("label") == "flood" and s.get("fds") is not None]
        if flood_fds:
            print(f"listener fds during floods: at most {max(flood_fds)} (the node's cap: {NODE_CAP} connections)")
        print(f"peers created {self.peer_count}, vanished {self.retired}, pairs checked {self.checked_pairs}; "
              f"outbox --send runs {self.settles}")
        print("listener events: " + ", ".join(f"{k} {v}" for k, v in sorted(self.events.items()))
              + f"; probed connections {self.probed}")
        if self.error_events:
            print(f"listener error events ({len(self.error_events)}): {self.error_events[:3]}")
        for note in self.notes:
            print(f"note: {note}")
        summary = {"kind": "summary", "minutes": self.minutes,
                   "exchanges": {p: {str(k): v for k, v in c.items()} for p, c in by_path.items()},
                   "followUps": dict(states), "followUpsFailed": self.message_failures,
                   "inbox": getattr(self, "inbox_count", None), "floods": {k: dict(v) for k, v in self.flood_tally.items()},
                   "floodRuns": dict(self.flood_runs), "peersCreated": self.peer_count, "peersVanished": self.retired,
                   "pairsChecked": self.checked_pairs, "events": dict(self.events), "probed": self.probed,
                   "honestRates": getattr(self, "rates", {}), "fault": self.fault,
                   "errorEvents": self.error_events[:20], "notes": self.notes,
                   "violations": [line for lines in self.violations.values() for line in lines]}
        self.report.write(json.dumps(summary) + "\n")
        self.report.close()
        print(f"report: {self.report_path}")


def main():
    ap = argparse.ArgumentParser(description="The Nearcard soak run (see the docstring).")
    ap.add_argument("--minutes", type=float, default=float(os.environ.get("SOAK_MINUTES") or 60),
                    help="how long the workload runs (default $SOAK_MINUTES, else 60)")
    ap.add_argument("--report", help="samples and the summary as JSON lines "
                    "(default /tmp/nearcard-soak-report-STAMP.jsonl)")
    ap.add_argument("--fault", choices=sorted(FAULTS),
                    help="run a listener broken on purpose (a debug build): the run passes only if it fails as it must")
    args = ap.parse_args()
    if args.minutes <= 0:
        ap.error("--minutes must be positive")
    report = os.path.abspath(args.report or os.path.join(
        tempfile.gettempdir(), time.strftime("nearcard-soak-report-%Y%m%dT%H%M%SZ.jsonl", time.gmtime())))

    def interrupt(signum, frame):
        raise KeyboardInterrupt()
    signal.signal(signal.SIGTERM, interrupt)
    signal.signal(signal.SIGHUP, interrupt)

    soak = Soak(args.minutes, report, args.fault)
    code = 0
    try:
        soak.setup()
        soak.start_listener()
        soak.run()
        soak.bounds()
        soak.summary()
        lines = [line for kind, ls in soak.violations.items() for line in ls]
        if args.fault:
            # Inverted: the run must catch the fault, with the violation it causes.
            want = FAULTS[args.fault]
            kinds = sorted(soak.violations)
            if want in soak.violations:
                print(f"\nsoak: the fault {args.fault} was caught ({want}: {soak.violations[want][0]})")
            else:
                print(f"\nsoak: the fault {args.fault} was NOT caught as {want} (violations: {kinds or 'none'})",
                      file=sys.stderr)
                code = 1
        elif lines:
            print(f"\nsoak: FAILED, {len(lines)} violation(s):", file=sys.stderr)
            for kind, ls in soak.violations.items():
                for line in ls[:10]:
                    print(f"  {kind}: {line}", file=sys.stderr)
                if len(ls) > 10:
                    print(f"  {kind}: … and {len(ls) - 10} more (in the report)", file=sys.stderr)
            code = 1
        else:
            print(f"\nsoak: passed ({args.minutes:g} min, every bound held)")
    except KeyboardInterrupt:
        print("\nsoak: interrupted; stopping everything it started", file=sys.stderr)
        code = 130
    finally:
        # A second Ctrl-C or SIGTERM must not cut the clean-up short.
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        soak.stop.set()
        soak.kill_all()
        if getattr(soak, "tmp", None):
            shutil.rmtree(soak.tmp, ignore_errors=True)
    raise SystemExit(code)


if __name__ == "__main__":
    main()
