#!/usr/bin/env python3
"""A CardDAV server that misbehaves on purpose, on 127.0.0.1, for the address-book error tests.

The first path segment chooses how it misbehaves; under it, /MODE/book/ is the address book:

  full       a good address book whose every PUT answers 507 Insufficient Storage
  fail       every request answers 500 Internal Server Error
  huge       PROPFIND answers a 207 of 17 MiB (over Nearcard's 16 MiB limit for an answer)
  malformed  PROPFIND answers a 207 whose XML never closes
  entity     PROPFIND answers a 207 with a DTD and nested entities (a "billion laughs")

It prints its port on the first line of standard output, then serves until standard input closes
(the test that started it ends) or it is killed. Standard library only.
"""

import http.server
import socketserver
import sys
import threading

BOOK = """<?xml version="1.0" encoding="utf-8"?>
<d:multistatus xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav">
 <d:response><d:href>{href}</d:href><d:propstat><d:prop>
  <d:resourcetype><d:collection/><card:addressbook/></d:resourcetype>
  <d:displayname>Contacts</d:displayname><d:getetag>"book-1"</d:getetag>
  <d:current-user-privilege-set><d:privilege><d:all/></d:privilege></d:current-user-privilege-set>
 </d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>
</d:multistatus>
"""

LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE d:multistatus [
 <!ENTITY a "lol">
 <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
 <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">
 <!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">
 <!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;">
]>
<d:multistatus xmlns:d="DAV:"><d:response><d:href>&e;</d:href></d:response></d:multistatus>
"""


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def answer(self, status, body=b"", content_type="application/xml; charset=utf-8"):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)

    def mode(self):
        parts = [p for p in self.path.split("/") if p]
        return parts[0] if parts else ""

    def handle_any(self):
        self.read_body()
        mode = self.mode()
        if mode not in ("full", "fail", "huge", "malformed", "entity"):
            return self.answer(404, b"", "text/plain")  # /.well-known/carddav among them: no second chance
        if mode == "fail":
            return self.answer(500, b"internal error", "text/plain")
        if self.command == "PROPFIND":
            if mode == "huge":
                return self.answer(207, b"<!--" + b"x" * (17 << 20) + b"-->")
            if mode == "malformed":
                return self.answer(207, b'<?xml version="1.0"?><d:multistatus xmlns:d="DAV:"><d:response><d:href>')
            if mode == "entity":
                return self.answer(207, LAUGHS.encode())
            return self.answer(207, BOOK.format(href="/%s/book/" % mode).encode())
        if self.command == "PUT" and mode == "full":
            return self.answer(507, b"insufficient storage", "text/plain")
        if self.command == "GET":
            return self.answer(404, b"", "text/plain")
        return self.answer(405, b"", "text/plain")

    do_PROPFIND = do_PUT = do_GET = do_DELETE = do_REPORT = do_OPTIONS = handle_any


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    server = Server(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()  # until the test closes it
    server.shutdown()


if __name__ == "__main__":
    main()
