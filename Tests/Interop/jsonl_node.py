"""A Nearcard node driven through its JSON-lines interface (docs/JSONL.md), for the test drivers."""
import json
import queue
import subprocess
import threading
import time

# Its checks are assert statements: with -O (or PYTHONOPTIMIZE) they would pass anything.
if not __debug__:
    raise SystemExit("jsonl_node.py: run it without -O / PYTHONOPTIMIZE (its checks are asserts)")


class JsonlNode:
    """Starts `argv` (under `wrap`, e.g. a lab namespace's `ip netns exec NS env DBUS_SYSTEM_BUS_ADDRESS=…`), reads its events on a thread and
    sends it commands. `fail(why)` is called when a wait cannot be satisfied."""

    def __init__(self, name, argv, fail, wrap=()):
        self.name = name
        self.fail = fail
        self.proc = subprocess.Popen(list(wrap) + argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, bufsize=1)
        self.events = queue.Queue()
        self.all = []      # every event, in order
        self.backlog = []  # events no wait has taken yet
        self.lines = []    # stdout as printed
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line)
            event = json.loads(line)  # every stdout line must be one JSON object
            assert event["v"] == 1, event
            self.events.put(event)
        self.events.put(None)

    def send(self, command):
        """A command: a dict (sent as JSON) or a line of words."""
        self.proc.stdin.write((command if isinstance(command, str) else json.dumps(command)) + "\n")
        self.proc.stdin.flush()

    def wait(self, predicate, what, timeout=20):
        """The first event, earlier ones not yet taken included, that `predicate` accepts."""
        for e in self.backlog:
            if predicate(e):
                self.backlog.remove(e)
                return e
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                e = self.events.get(timeout=max(0.01, deadline - time.time()))
            except queue.Empty:
                break
            if e is None:
                self.fail(f"{self.name} exited while waiting for {what}: {self.proc.stderr.read()}")
            self.all.append(e)
            if predicate(e):
                return e
            self.backlog.append(e)
        self.fail(f"{self.name}: no {what} within {timeout} s; saw {[(x['event'], x.get('instance'), x.get('id')) for x in self.all[-12:]]}")
