#!/usr/bin/env python3
"""A webhook receiver as an operator's system would run one, written from docs/OPERATIONS.md alone:
checks X-Nearcard-Signature (HMAC-SHA256 of "TIMESTAMP." + body under the shared secret) and the
timestamp's age, and appends one JSON line per request to OUTFILE: {delivery, valid, event, name, did}.
Answers 200 to a valid delivery, 401 to a forged one, and 503 to the first --fail-first requests.
Usage: webhook_receiver.py PORT SECRET OUTFILE [--fail-first N]"""
import hashlib
import hmac
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

port, secret, outfile = int(sys.argv[1]), sys.argv[2].encode(), sys.argv[3]
fail_first = int(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[4] == "--fail-first" else 0
seen = {"count": 0}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        seen["count"] += 1
        if seen["count"] <= fail_first:
            self.send_response(503)
            self.end_headers()
            return
        timestamp = self.headers.get("X-Nearcard-Timestamp", "")
        given = self.headers.get("X-Nearcard-Signature", "")
        expected = "sha256=" + hmac.new(secret, timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
        fresh = timestamp.isdigit() and abs(time.time() - int(timestamp)) < 300
        valid = fresh and hmac.compare_digest(given, expected)
        contact = json.loads(body) if valid else {}
        record = {"delivery": self.headers.get("X-Nearcard-Delivery"), "event": self.headers.get("X-Nearcard-Event"),
                  "valid": valid, "name": contact.get("name"), "did": contact.get("didPublicKey"),
                  "exchanges": len(contact.get("exchanges", [])), "type": self.headers.get("Content-Type")}
        with open(outfile, "a") as f:
            f.write(json.dumps(record) + "\n")
        self.send_response(200 if valid else 401)
        self.end_headers()

    def log_message(self, *args):
        pass


HTTPServer(("127.0.0.1", port), Handler).serve_forever()
