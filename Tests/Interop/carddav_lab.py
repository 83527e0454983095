#!/usr/bin/env python3
"""The CardDAV lab: real CardDAV servers on loopback with TLS for Nearcard's sync tests, and a client to
look at what they hold. Runs with .venv/bin/python3 (needs `cryptography` and `vobject` from
scripts/requirements-test.txt); the servers are Debian's `radicale` and `xandikos`, run with /usr/bin/python3.

  carddav_lab.py serve --server radicale|xandikos --dir DIR [--expired-cert] [--cert-name NAME] [--read-only]
                       [--user alice --password secret] [--no-trust-store]
      Makes a throw-away CA and a server certificate for localhost/127.0.0.1 signed by it (--expired-cert:
      the server certificate expired yesterday, the CA is valid), writes DIR/ca.pem, and adds the CA to the
      system trust store (/usr/local/share/ca-certificates + update-ca-certificates; needs root) so that any
      process on the machine, the unprivileged test user's included, trusts it. Writes DIR/password (mode
      0600, owned by the `nearcard-test` account if there is one). Starts the server on 127.0.0.1 with HTTP
      Basic auth and an address book for the user, then prints ONE JSON line on stdout:
        {"url": "https://localhost:PORT/", "addressbook": "https://localhost:PORT/alice/contacts/",
         "principal": "https://localhost:PORT/alice/", "user": "alice", "password_file": "DIR/password",
         "ca": "DIR/ca.pem", "pid": PID, "server": "radicale", "port": PORT}
      (about 1-3 s after start: update-ca-certificates and its Java hook take most of it) and runs until
      SIGTERM/SIGINT/SIGHUP; then it stops the server, takes the CA out of the trust store again
      (update-ca-certificates --fresh, then the hooks are told, so Java's keystore drops it too) and exits 0.
      Trust-store changes are serialized between labs by a flock on /run/lock/nearcard-carddav-ca.lock; a
      lab killed by SIGKILL takes its server with it (PR_SET_PDEATHSIG) and the next lab removes its CA.
      Logs go to stderr only. The CA's private key is never written anywhere.
        radicale:  Radicale 3 with its own TLS, htpasswd (plain) auth, owner_only rights (--read-only: a
                   from_file rights file granting 'R' on the principal and 'r' on its address books).
                   Address book: /USER/contacts/ (made before start-up by writing Radicale's storage).
        xandikos:  xandikos --defaults on a unix socket (it has no TLS and no auth of its own) behind a TLS
                   reverse proxy in this script that requires Basic auth (401 + WWW-Authenticate otherwise)
                   and, with --read-only, answers 403 to PUT/DELETE/MKCOL/PROPPATCH/MOVE/COPY/...
                   Address book: /USER/contacts/addressbook/.
        Both redirect /.well-known/carddav to "/" (Radicale 301, Xandikos 302) without asking for a
        password; PROPFIND "/" (authenticated) answers current-user-principal /USER/.
        Differences a client meets (Radicale 3.1.8 / Xandikos 0.2.8):
          addressbook-home-set         /USER/ (the principal)        /USER/contacts/ (principal has no members)
          HTTP version                 HTTP/1.0, no keep-alive       HTTP/1.1 keep-alive
          ETag                         "sha256 hex" (quoted)         "sha1 hex" (quoted)
          body stored                  re-serialized by vobject      byte for byte as PUT
          PUT new / replace            201 / 201 (ETag on both)      201 / 204 (ETag on both)
          DELETE                       200                           204
          If-Match mismatch, If-None-Match: * on existing, If-Match on missing: 412 on both
          invalid vCard / no FN        400                           accepted (201)
          same UID at a second href    409                           accepted
          XML body without XML Content-Type, e.g. PROPFIND   accepted   415
          addressbook-query with a prop-filter               works      500 (Xandikos bug): use
                                                                          PROPFIND, multiget or sync-collection
          collection URL without its trailing slash: 207 with the slashed href on both.
          --read-only: Radicale reports current-user-privilege-set <read/>; behind the proxy Xandikos still
          says <all/> (writes are refused by the proxy with 403 all the same).

  carddav_lab.py list --url COLLECTION_URL --user U --password-file F [--ca CA]
      PROPFIND Depth 1 on the collection, GET of every member, vobject.readOne of each; prints a JSON array
      sorted by href, one object per card: href, url, etag, version, uid, fn, email, emails, tel, tels, org,
      title, note, did (X-NEARCARD-DID), verification (X-NEARCARD-VERIFICATION), properties (sorted property
      names), raw. A card that does not parse: one line on stderr, exit 1.
  carddav_lab.py set-note --url COLLECTION_URL --user U --password-file F --uid UID --note TEXT [--if-match E]
      Sets (replaces) the NOTE of the card with that UID (vobject) and PUTs it back with If-Match on its
      ETag (or E); prints {"href", "etag", "status"}. A refused PUT (412, 403, ...): stderr, exit 1.
  carddav_lab.py delete --url COLLECTION_URL --user U --password-file F --uid UID [--if-match E]
      DELETEs the card with that UID with If-Match on its ETag (or E); prints {"href", "status"}.
  carddav_lab.py stop --pid PID
      SIGTERM to a `serve` and wait (15 s at most) until it has cleaned up and gone.
--ca CA (all client commands): trust this CA file instead of the system store.
"""
import argparse
import base64
import contextlib
import ctypes
import datetime
import fcntl
import glob
import hmac
import http.client
import ipaddress
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urljoin, urlsplit

TEST_ACCOUNT = "nearcard-test"
TRUST_DIR = "/usr/local/share/ca-certificates"
TRUST_PREFIX = "nearcard-test-"
SYSTEM_PYTHON = "/usr/bin/python3"
DAV = "{DAV:}"
CARDDAV = "{urn:ietf:params:xml:ns:carddav}"
WRITE_METHODS = {"PUT", "DELETE", "MKCOL", "MKCALENDAR", "PROPPATCH", "MOVE", "COPY", "POST", "ACL", "LOCK", "UNLOCK"}
HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "trailers",
              "transfer-encoding", "upgrade", "expect"}


def log(msg):
    sys.stderr.write(f"carddav_lab[{os.getpid()}]: {msg}\n")
    sys.stderr.flush()


class Terminated(BaseException):
    """Raised in the main thread by SIGTERM/SIGINT/SIGHUP so that `finally` cleans up."""


# ---------------------------------------------------------------------------------------------- PKI


def make_pki(directory, hostname, expired, with_address=True):
    """A throw-away CA and a server certificate for hostname (+ 127.0.0.1 with_address) signed by it.
    Returns (ca_pem_path, cert_path, key_path)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    tag = secrets.token_hex(4)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Nearcard tests"),
                         x509.NameAttribute(NameOID.COMMON_NAME, f"Nearcard CardDAV lab CA {tag}")])
    ca_ski = x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key())
    ca_cert = (x509.CertificateBuilder()
               .subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
               .serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(days=60))
               .not_valid_after(now + datetime.timedelta(days=30))
               .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
               .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                            data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                            crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
               .add_extension(ca_ski, critical=False)
               .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    if expired:
        not_before, not_after = now - datetime.timedelta(days=30), now - datetime.timedelta(days=1)
    else:
        not_before, not_after = now - datetime.timedelta(hours=1), now + datetime.timedelta(days=14)
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hostname)]))
            .issuer_name(ca_name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(not_before).not_valid_after(not_after)
            .add_extension(x509.SubjectAlternativeName(
                [x509.DNSName(hostname)] + ([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))] if with_address else [])),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                         crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False)
            .sign(ca_key, hashes.SHA256()))
    ca_path = os.path.join(directory, "ca.pem")
    cert_path = os.path.join(directory, "server-cert.pem")
    key_path = os.path.join(directory, "server-key.pem")
    write_file(ca_path, ca_cert.public_bytes(serialization.Encoding.PEM), 0o644)
    write_file(cert_path, cert.public_bytes(serialization.Encoding.PEM), 0o644)
    write_file(key_path, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()), 0o600)
    log(f"CA 'Nearcard CardDAV lab CA {tag}'; server certificate for {hostname}/127.0.0.1 valid "
        f"{not_before:%Y-%m-%d %H:%M} .. {not_after:%Y-%m-%d %H:%M} UTC{' (EXPIRED)' if expired else ''}")
    return ca_path, cert_path, key_path


def write_file(path, data, mode, owner=None):
    if isinstance(data, str):
        data = data.encode()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.fchmod(fd, mode)
        if owner is not None:
            os.fchown(fd, owner[0], owner[1])
        os.write(fd, data)
    finally:
        os.close(fd)


# ------------------------------------------------------------------------------------ trust store


@contextlib.contextmanager
def trust_store_lock():
    lock_dir = "/run/lock" if os.access("/run/lock", os.W_OK) else "/tmp"
    fd = os.open(os.path.join(lock_dir, "nearcard-carddav-ca.lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def run_update_ca_certificates(fresh):
    cmd = ["update-ca-certificates"] + (["--fresh"] if fresh else [])
    started = time.monotonic()
    result = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    out = " | ".join(line.strip() for line in result.stdout.splitlines()
                     if line.strip() and not line.startswith(("Replacing debian:", "Adding debian:")))
    log(f"{' '.join(cmd)}: exit {result.returncode} in {time.monotonic() - started:.1f} s: {out}")
    return result.returncode


SYSTEM_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
SYSTEM_CERTS = "/etc/ssl/certs"


def system_trusts(ca_pem, target):
    """(whether the bundle holds ca_pem, number of /etc/ssl/certs entries pointing at target)."""
    with open(SYSTEM_BUNDLE) as f:
        in_bundle = ca_pem.strip() in f.read()
    links = 0
    for entry in os.listdir(SYSTEM_CERTS):
        full = os.path.join(SYSTEM_CERTS, entry)
        if os.path.islink(full) and os.path.basename(os.path.realpath(full)) == os.path.basename(target):
            links += 1
    return in_bundle, links


def lab_alive(pid):
    """Whether pid is a running carddav_lab (so its trust-store file is not stale)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read()
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return b"carddav_lab" in cmdline and state != "Z"


def trust_target():
    return os.path.join(TRUST_DIR, f"{TRUST_PREFIX}{os.getpid()}-{secrets.token_hex(4)}.crt")


def tell_hooks_removed(targets):
    """update-ca-certificates only reports a removed local CA to its hooks (Java's keystore) for CAs
    deselected in /etc/ca-certificates.conf, not for deleted files, even with --fresh: do it as it would,
    with one '-/etc/ssl/certs/NAME.pem' line per CA on each hook's stdin."""
    lines = "".join(f"-{SYSTEM_CERTS}/{os.path.basename(t)[:-len('.crt')]}.pem\n" for t in targets)
    hooks_dir = "/etc/ca-certificates/update.d"
    for hook in sorted(glob.glob(os.path.join(hooks_dir, "*"))):
        name = os.path.basename(hook)
        if not os.access(hook, os.X_OK) or not name.replace("-", "").replace("_", "").isalnum():
            continue  # run-parts' rules
        result = subprocess.run([hook], input=lines, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out = " | ".join(line.strip() for line in result.stdout.splitlines() if line.strip())
        log(f"hook {name} told of {len(targets)} removed CA(s): exit {result.returncode}: {out}")


def install_trust(ca_pem, target):
    """Adds the CA to the system trust store as target. Also takes out the CAs of labs that died without
    cleaning up (SIGKILL)."""
    os.makedirs(TRUST_DIR, exist_ok=True)
    write_file(target, ca_pem, 0o644)  # before the lock: a lab updating meanwhile may take it up for us
    with trust_store_lock():
        stale = []
        for path in glob.glob(os.path.join(TRUST_DIR, TRUST_PREFIX + "*.crt")):
            pid = os.path.basename(path)[len(TRUST_PREFIX):].split("-", 1)[0]
            if pid.isdigit() and not lab_alive(int(pid)):
                log(f"removing stale {path} (its lab, pid {pid}, is gone)")
                os.unlink(path)
                stale.append(path)
        in_bundle, links = system_trusts(ca_pem, target)
        if stale or not in_bundle or not links:
            run_update_ca_certificates(fresh=bool(stale))  # a failing hook (e.g. dpkg locked) is only logged
            if stale:
                tell_hooks_removed(stale)
            in_bundle, links = system_trusts(ca_pem, target)
        else:
            log("another lab's update-ca-certificates run already took up our CA")
    if not in_bundle or not links:
        raise RuntimeError(f"update-ca-certificates did not take up {target} (bundle: {in_bundle}, links: {links})")
    log(f"CA trusted system-wide as {target}")


def remove_trust(ca_pem, target):
    """Takes the CA out again: --fresh drops its /etc/ssl/certs links (a plain run would leave them
    dangling) and rebuilds the bundle; then the hooks (Java's keystore) are told."""
    with trust_store_lock():
        with contextlib.suppress(FileNotFoundError):
            os.unlink(target)
        run_update_ca_certificates(fresh=True)
        tell_hooks_removed([target])
        in_bundle, links = system_trusts(ca_pem, target)
    if in_bundle or links:
        raise RuntimeError(f"the CA is still trusted (bundle: {in_bundle}, links: {links})")
    log(f"CA removed from the system trust store ({target})")


# -------------------------------------------------------------------------------------- processes


def _die_with_parent():
    """preexec_fn: the server gets SIGTERM if the lab dies, even by SIGKILL (PR_SET_PDEATHSIG)."""
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)


def child_env():
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    venv_bin = os.path.dirname(sys.executable)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "/usr/bin:/bin").split(os.pathsep) if p != venv_bin)
    return env


def start_child(cmd):
    log("starting: " + " ".join(cmd))
    # stdout to our stderr: our stdout carries only the JSON line.
    return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=sys.stderr.fileno(), stderr=sys.stderr.fileno(),
                            env=child_env(), preexec_fn=_die_with_parent, close_fds=True)


def stop_child(proc, name):
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        log(f"{name} (pid {proc.pid}) ignored SIGTERM; killing it")
        proc.kill()
        proc.wait(5)
    log(f"{name} (pid {proc.pid}) stopped")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(check, proc, name, timeout=15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        if check():
            return True
        time.sleep(0.05)
    raise RuntimeError(f"{name} did not come up within {timeout:.0f} s")


def tls_open(port):
    """Whether a TLS handshake with 127.0.0.1:port completes (certificate not checked: it may be expired).
    A bare TCP probe would make Radicale log a failed handshake."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as raw:
            with context.wrap_socket(raw, server_hostname="localhost"):
                return True
    except OSError:  # ssl.SSLError is an OSError
        return False


def unix_open(path):
    if not os.path.exists(path):
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(0.5)
            s.connect(path)
            return True
    except OSError:
        return False


# ---------------------------------------------------------------------------------------- Radicale


def setup_radicale(directory, user, password, read_only, cert_path, key_path):
    """Writes Radicale's config, users and (with read_only) rights files, and the user's principal and
    address book straight into Radicale's storage. Returns (config_path, addressbook_path)."""
    storage = os.path.join(directory, "collections")
    root = os.path.join(storage, "collection-root")
    book = os.path.join(root, user, "contacts")
    os.makedirs(book, exist_ok=True)
    props = os.path.join(book, ".Radicale.props")
    if not os.path.exists(props):
        write_file(props, json.dumps({"tag": "VADDRESSBOOK", "D:displayname": "Contacts"}), 0o644)
    users = os.path.join(directory, "radicale-users")
    write_file(users, f"{user}:{password}\n", 0o600)
    rights_lines = ["[rights]", "type = owner_only"]
    if read_only:
        rights = os.path.join(directory, "radicale-rights")
        write_file(rights, "\n".join([
            "# read-only lab: find the principal, read (never write) its address books",
            "[root]", "user: .+", "collection:", "permissions: R",
            "[principal]", "user: .+", "collection: {user}", "permissions: R",
            "[addressbooks]", "user: .+", "collection: {user}/[^/]+", "permissions: r", ""]), 0o644)
        rights_lines = ["[rights]", "type = from_file", f"file = {rights}"]
    config = os.path.join(directory, "radicale.conf")
    write_file(config, "\n".join([
        "[server]", "hosts = 127.0.0.1:{port}", "ssl = True", f"certificate = {cert_path}", f"key = {key_path}",
        "[auth]", "type = htpasswd", f"htpasswd_filename = {users}", "htpasswd_encryption = plain", "delay = 0",
        *rights_lines,
        "[storage]", f"filesystem_folder = {storage}",
        "[web]", "type = none",
        "[logging]", "level = info", "mask_passwords = True", ""]), 0o600)
    return config, f"/{user}/contacts/"


def start_radicale(config_template, children, meanwhile, fixed_port=0):
    """Starts Radicale on a free port (or fixed_port), runs meanwhile() while it boots, waits until it answers TLS."""
    with open(config_template) as f:
        template = f.read()
    for attempt in range(5):
        port = fixed_port or free_port()
        config = config_template + ".active"
        write_file(config, template.replace("{port}", str(port)), 0o600)
        proc = start_child([SYSTEM_PYTHON, "-m", "radicale", "--config", config])
        children.append(proc)
        if attempt == 0:
            meanwhile()
        if wait_until(lambda: tls_open(port), proc, "radicale"):
            return proc, port
        log(f"radicale exited with {proc.returncode} (port {port} taken?); retrying")
    raise RuntimeError("radicale would not start")


# ---------------------------------------------------------------------------------------- Xandikos


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout=60):
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self.unix_path)
        self.sock = sock


class ProxyServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, tls_context, upstream, user, password, read_only, port=0):
        self.tls_context, self.upstream = tls_context, upstream
        self.user, self.password, self.read_only = user.encode(), password.encode(), read_only
        super().__init__(("127.0.0.1", port), ProxyHandler)

    def finish_request(self, request, client_address):
        # The TLS handshake happens here, in the connection's own thread, not in the accept loop.
        request.settimeout(30)
        try:
            tls = self.tls_context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as e:
            log(f"proxy: TLS handshake with {client_address[0]}:{client_address[1]} failed: {e}")
            return
        try:
            self.RequestHandlerClass(tls, client_address, self)
        except (ssl.SSLError, OSError) as e:
            log(f"proxy: connection from {client_address[0]}:{client_address[1]} ended: {e}")
        finally:
            with contextlib.suppress(OSError):
                tls.close()


class ProxyHandler(BaseHTTPRequestHandler):
    """Basic auth + (read-only) method filter in front of Xandikos; everything else goes through unchanged."""
    protocol_version = "HTTP/1.1"
    server_version = "nearcard-carddav-lab"
    timeout = 120

    def __getattr__(self, name):
        if name.startswith("do_"):
            return self.proxy
        raise AttributeError(name)

    def log_message(self, fmt, *args):
        log("proxy: " + (fmt % args))

    def read_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline(65537).split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(65537).strip():  # trailers
                        pass
                    return b"".join(chunks), True
                chunks.append(self.rfile.read(size))
                self.rfile.readline(65537)
        length = self.headers.get("Content-Length")
        if length is not None:
            return self.rfile.read(int(length)), True
        return b"", False

    def authorized(self):
        header = self.headers.get("Authorization", "")
        if header[:6].lower() != "basic ":
            return False
        try:
            user, sep, password = base64.b64decode(header[6:].strip(), validate=True).partition(b":")
        except ValueError:
            return False
        return bool(sep) & hmac.compare_digest(user, self.server.user) & hmac.compare_digest(password,
                                                                                          self.server.password)

    def answer(self, status, text, extra=()):
        body = text.encode()
        self.send_response(status)
        for k, v in extra:
            self.send_header(k, v)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def proxy(self):
        body, had_length = self.read_body()
        path = urlsplit(self.path).path
        well_known = path.rstrip("/") in ("/.well-known/carddav", "/.well-known/caldav")
        if not well_known and not self.authorized():  # like Radicale, the redirect needs no password
            self.answer(401, "Authentication required\n", [("WWW-Authenticate", 'Basic realm="xandikos"')])
            return
        if self.server.read_only and self.command in WRITE_METHODS:
            self.answer(403, f"{self.command} refused: this lab is read-only\n")
            return
        conn = UnixHTTPConnection(self.server.upstream)
        try:
            conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
            if "Host" not in self.headers:
                conn.putheader("Host", "localhost")
            for k, v in self.headers.items():
                if k.lower() in HOP_BY_HOP or k.lower() in ("content-length", "authorization"):
                    continue
                conn.putheader(k, v)
            if had_length or body:
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body or None)
            resp = conn.getresponse()
            data = resp.read()
        except OSError as e:
            log(f"proxy: xandikos unreachable: {e}")
            self.answer(502, f"xandikos unreachable: {e}\n")
            return
        finally:
            conn.close()
        self.log_request(resp.status, len(data))
        self.send_response_only(resp.status, resp.reason)
        for k, v in resp.getheaders():
            if k.lower() not in HOP_BY_HOP and k.lower() != "content-length":
                self.send_header(k, v)
        if self.command == "HEAD":
            if resp.getheader("Content-Length") is not None:
                self.send_header("Content-Length", resp.getheader("Content-Length"))
        elif resp.status >= 200 and resp.status not in (204, 304):
            self.send_header("Content-Length", str(len(data)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD" and data:
            self.wfile.write(data)


def start_xandikos(directory, user, children, meanwhile):
    """Starts Xandikos on a unix socket, runs meanwhile() while it boots, waits until it accepts."""
    sock_path = os.path.join(directory, "xandikos.sock")
    if len(sock_path) > 100:  # AF_UNIX paths are limited to 108 bytes
        import tempfile
        sock_path = os.path.join(tempfile.mkdtemp(prefix="nearcard-xandikos-"), "x.sock")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(sock_path)
    xandikos = "/usr/bin/xandikos" if os.path.exists("/usr/bin/xandikos") else shutil.which("xandikos")
    if not xandikos:
        raise RuntimeError("xandikos is not installed (apt-get install xandikos)")
    proc = start_child([xandikos, "--defaults", "-d", os.path.join(directory, "xandikos"),
                        "--current-user-principal", f"/{user}/", "-l", sock_path])
    children.append(proc)
    meanwhile()
    if not wait_until(lambda: unix_open(sock_path), proc, "xandikos"):
        raise RuntimeError(f"xandikos exited with {proc.returncode}")
    return proc, sock_path, f"/{user}/contacts/addressbook/"


# ------------------------------------------------------------------------------------------- serve


def check_traversable(directory):
    path = os.path.abspath(directory)
    while True:
        parent = os.path.dirname(path)
        if parent == path:
            return
        path = parent
        if not os.stat(path).st_mode & 0o001:
            log(f"warning: {path} is not world-searchable; {TEST_ACCOUNT} may not reach {directory}")


def cmd_serve(args):
    if "\n" in args.password or ":" in args.user or "\n" in args.user:
        sys.exit("serve: --user must not contain ':' or a newline, --password no newline")
    if not args.no_trust_store and os.geteuid() != 0:
        sys.exit("serve: adding the CA to the system trust store needs root (or pass --no-trust-store)")
    started = time.monotonic()
    stopping = {"signal": None}

    def on_signal(signum, _frame):
        if stopping["signal"] is None:
            stopping["signal"] = signum
            raise Terminated(signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)

    directory = os.path.abspath(args.dir)
    os.makedirs(directory, exist_ok=True)
    os.chmod(directory, 0o755)
    try:
        account = pwd.getpwnam(TEST_ACCOUNT)
        owner = (account.pw_uid, account.pw_gid)
    except KeyError:
        owner = None
    if os.geteuid() != 0:
        owner = None
    check_traversable(directory)
    password_file = os.path.join(directory, "password")
    write_file(password_file, args.password, 0o600, owner)

    trusted = proxy = sock_path = None
    children = []
    exit_code = 0
    try:
        ca_path, cert_path, key_path = make_pki(directory, args.cert_name or "localhost", args.expired_cert,
                                                with_address=args.cert_name is None)
        with open(ca_path) as f:
            ca_pem = f.read()
        trusted = None if args.no_trust_store else trust_target()

        def meanwhile():  # update-ca-certificates takes a second or two: while the server boots
            if trusted:
                install_trust(ca_pem, trusted)

        if args.server == "radicale":
            config, book = setup_radicale(directory, args.user, args.password, args.read_only, cert_path, key_path)
            proc, port = start_radicale(config, children, meanwhile, args.port)
        else:
            proc, sock_path, book = start_xandikos(directory, args.user, children, meanwhile)
            tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            tls.load_cert_chain(cert_path, key_path)
            proxy = ProxyServer(tls, sock_path, args.user, args.password, args.read_only, args.port)
            port = proxy.server_address[1]
            threading.Thread(target=proxy.serve_forever, name="tls-proxy", daemon=True).start()
            log(f"TLS proxy on 127.0.0.1:{port} -> {sock_path} (Basic auth{', read-only' if args.read_only else ''})")
        base = f"https://localhost:{port}/"
        line = {"url": base, "addressbook": urljoin(base, book), "principal": urljoin(base, f"/{args.user}/"),
                "user": args.user, "password_file": password_file, "ca": ca_path, "pid": os.getpid(),
                "server": args.server, "port": port}
        log(f"{args.server} ready in {time.monotonic() - started:.1f} s: address book {line['addressbook']}")
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()
        while True:
            if proc.poll() is not None:
                log(f"{args.server} exited unexpectedly with {proc.returncode}")
                exit_code = 1
                break
            time.sleep(0.5)
    except Terminated:
        log(f"got {signal.Signals(stopping['signal']).name}; cleaning up")
    except Exception as e:  # start-up failed: still clean up the trust store
        log(f"error: {e}")
        exit_code = 1
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        if proxy is not None:
            proxy.shutdown()
            proxy.server_close()
        for child in children:
            stop_child(child, args.server)
        if sock_path:
            with contextlib.suppress(OSError):
                os.unlink(sock_path)
        if trusted:
            try:
                remove_trust(ca_pem, trusted)
            except Exception as e:
                log(f"error: could not take the CA out of the trust store: {e}")
                exit_code = 1
    return exit_code


# ------------------------------------------------------------------------------------------ client


class Client:
    def __init__(self, args):
        with open(args.password_file) as f:
            password = f.read().rstrip("\r\n")
        self.auth = "Basic " + base64.b64encode(f"{args.user}:{password}".encode()).decode()
        self.context = ssl.create_default_context(cafile=args.ca) if args.ca else ssl.create_default_context()
        self.collection = args.url if args.url.endswith("/") else args.url + "/"

    def request(self, method, url, headers=None, body=None):
        u = urlsplit(url)
        if u.scheme == "https":
            conn = http.client.HTTPSConnection(u.hostname, u.port or 443, context=self.context, timeout=30)
        else:
            conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=30)
        path = (u.path or "/") + (f"?{u.query}" if u.query else "")
        all_headers = {"Authorization": self.auth, "User-Agent": "nearcard-carddav-lab"}
        all_headers.update(headers or {})
        try:
            conn.request(method, path, body=body, headers=all_headers)
            resp = conn.getresponse()
            return resp.status, resp.reason, resp.headers, resp.read()
        except (OSError, http.client.HTTPException) as e:  # ssl.SSLCertVerificationError is an OSError
            fail(f"{method} {url}: {type(e).__name__}: {e}")
        finally:
            conn.close()

    def members(self):
        """[(href, absolute url, etag from PROPFIND)] of the non-collection members of the collection."""
        body = ('<?xml version="1.0" encoding="utf-8"?>\n<d:propfind xmlns:d="DAV:"><d:prop>'
                '<d:resourcetype/><d:getetag/><d:getcontenttype/></d:prop></d:propfind>')
        status, reason, _, data = self.request("PROPFIND", self.collection, {
            "Depth": "1", "Content-Type": "application/xml; charset=utf-8"}, body.encode())
        if status != 207:
            fail(f"PROPFIND {self.collection}: {status} {reason}")
        own_path = unquote(urlsplit(self.collection).path).rstrip("/")
        found = []
        for response in ET.fromstring(data).findall(f"{DAV}response"):
            href = (response.findtext(f"{DAV}href") or "").strip()
            url = urljoin(self.collection, href)
            if unquote(urlsplit(url).path).rstrip("/") == own_path:
                continue
            etag, is_collection = None, False
            for propstat in response.findall(f"{DAV}propstat"):
                if " 200 " not in (propstat.findtext(f"{DAV}status") or "") + " ":
                    continue
                prop = propstat.find(f"{DAV}prop")
                if prop is None:
                    continue
                if prop.find(f"{DAV}resourcetype/{DAV}collection") is not None:
                    is_collection = True
                if prop.findtext(f"{DAV}getetag"):
                    etag = prop.findtext(f"{DAV}getetag").strip()
            if not is_collection:
                found.append((href, url, etag))
        return sorted(found)

    def cards(self):
        import vobject
        result = []
        for href, url, etag in self.members():
            status, reason, headers, data = self.request("GET", url, {"Accept": "text/vcard"})
            if status in (404, 410):
                continue  # deleted between the listing and the GET (a node syncing meanwhile)
            if status != 200:
                fail(f"GET {href}: {status} {reason}")
            text = data.decode("utf-8")
            try:
                card = vobject.readOne(text)
                if card.name != "VCARD":
                    raise ValueError(f"a {card.name}, not a VCARD")
            except Exception as e:
                fail(f"{href} does not parse as a vCard: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            result.append((card, {"href": href, "url": url, "etag": headers.get("ETag") or etag}, text))
        return result

    def find(self, uid):
        for card, meta, text in self.cards():
            if first_value(card, "uid") == uid:
                return card, meta, text
        fail(f"no card with UID {uid} in {self.collection}")


def fail(message):
    sys.stderr.write(f"carddav_lab: {message}\n")
    sys.exit(1)


def as_text(value):
    if value is None:
        return None
    if isinstance(value, list):  # ORG and other structured values
        return ";".join(as_text(v) for v in value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    return str(value)


def first_value(card, key):
    lines = card.contents.get(key)
    return as_text(lines[0].value) if lines else None


def all_values(card, key):
    return [as_text(line.value) for line in card.contents.get(key, [])]


def describe(card, meta, text):
    emails, tels = all_values(card, "email"), all_values(card, "tel")
    return {"href": meta["href"], "url": meta["url"], "etag": meta["etag"],
            "version": first_value(card, "version"), "uid": first_value(card, "uid"), "fn": first_value(card, "fn"),
            "email": emails[0] if emails else None, "emails": emails,
            "tel": tels[0] if tels else None, "tels": tels,
            "org": first_value(card, "org"), "title": first_value(card, "title"),
            "note": first_value(card, "note"), "did": first_value(card, "x-nearcard-did"),
            "verification": first_value(card, "x-nearcard-verification"),
            "n": {"family": card.n.value.family, "given": card.n.value.given} if "n" in card.contents else None,
            "urls": all_values(card, "url"), "pronouns": first_value(card, "pronouns"),
            "properties": sorted({line.name.upper() for line in card.getChildren()}), "raw": text}


def cmd_list(args):
    client = Client(args)
    print(json.dumps([describe(*c) for c in client.cards()], ensure_ascii=False, indent=1))
    return 0


def cmd_set_note(args):
    client = Client(args)
    card, meta, _ = client.find(args.uid)
    for name, value in (("note", args.note), ("email", args.email)):
        if value is None:
            continue
        found = card.contents.get(name, [])
        if found:
            found[0].value = value
            for extra in found[1:]:
                card.remove(extra)
        else:
            card.add(name).value = value
    if_match = args.if_match or meta["etag"]
    if not if_match:
        fail(f"{meta['href']} has no ETag to send in If-Match")
    status, reason, headers, _ = client.request("PUT", meta["url"], {
        "If-Match": if_match, "Content-Type": "text/vcard; charset=utf-8"}, card.serialize().encode("utf-8"))
    if not 200 <= status < 300:
        fail(f"PUT {meta['href']} (If-Match: {if_match}): {status} {reason}")
    etag = headers.get("ETag")
    if not etag:  # the server changed what it stored, or does not say: ask
        _, _, got, _ = client.request("GET", meta["url"], {"Accept": "text/vcard"})
        etag = got.get("ETag")
    print(json.dumps({"href": meta["href"], "etag": etag, "status": status}))
    return 0


def cmd_delete(args):
    client = Client(args)
    _, meta, _ = client.find(args.uid)
    if_match = args.if_match or meta["etag"]
    headers = {"If-Match": if_match} if if_match else {}
    status, reason, _, _ = client.request("DELETE", meta["url"], headers)
    if not 200 <= status < 300:
        fail(f"DELETE {meta['href']} (If-Match: {if_match}): {status} {reason}")
    print(json.dumps({"href": meta["href"], "status": status}))
    return 0


def cmd_stop(args):
    if not lab_alive(args.pid):
        fail(f"process {args.pid} is not a running carddav_lab; not signalling it")
    try:
        os.kill(args.pid, signal.SIGTERM)
    except ProcessLookupError:
        fail(f"no process {args.pid}")
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if not lab_alive(args.pid):
            return 0
        time.sleep(0.1)
    fail(f"lab {args.pid} still running 15 s after SIGTERM")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run a CardDAV server with TLS on 127.0.0.1 until SIGTERM",
                           description="Run Radicale or Xandikos with TLS (a throw-away CA added to the system "
                                       "trust store) and Basic auth on 127.0.0.1; print one JSON line; run until "
                                       "SIGTERM/SIGINT, then undo everything.")
    serve.add_argument("--server", choices=["radicale", "xandikos"], required=True)
    serve.add_argument("--dir", required=True, help="working directory (ca.pem, password, storage, configs)")
    serve.add_argument("--expired-cert", action="store_true", help="the server certificate expired yesterday")
    serve.add_argument("--read-only", action="store_true", help="the user may read but not change the address book")
    serve.add_argument("--cert-name", help="the server certificate names only this host (not localhost, not 127.0.0.1)")
    serve.add_argument("--user", default="alice")
    serve.add_argument("--port", type=int, default=0,
                       help="serve on this loopback port (default: a free one); with the same --dir, a restarted server keeps its cards")
    serve.add_argument("--password", default="secret")
    serve.add_argument("--no-trust-store", action="store_true",
                       help="do not touch the system trust store (no root needed; clients must use DIR/ca.pem)")
    serve.set_defaults(func=cmd_serve)

    def client_parser(name, help_text):
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument("--url", required=True, help="the address book collection's URL")
        p.add_argument("--user", required=True)
        p.add_argument("--password-file", required=True)
        p.add_argument("--ca", help="trust this CA file instead of the system trust store")
        return p

    client_parser("list", "print every vCard of the collection as a JSON array").set_defaults(func=cmd_list)
    p = client_parser("set-note", "set the NOTE (and/or EMAIL) of the card with UID and PUT it back with If-Match, as a person's edit")
    p.add_argument("--uid", required=True)
    p.add_argument("--note")
    p.add_argument("--email", help="also change the card's EMAIL (a property Nearcard writes: an edit that can conflict)")
    p.add_argument("--if-match", help="send this If-Match instead of the card's current ETag")
    p.set_defaults(func=cmd_set_note)
    p = client_parser("delete", "DELETE the card with UID (If-Match its ETag)")
    p.add_argument("--uid", required=True)
    p.add_argument("--if-match", help="send this If-Match instead of the card's current ETag")
    p.set_defaults(func=cmd_delete)
    p = sub.add_parser("stop", help="SIGTERM a serve and wait until it is gone",
                       description="SIGTERM a `serve` and wait until it has cleaned up and exited.")
    p.add_argument("--pid", type=int, required=True)
    p.set_defaults(func=cmd_stop)

    args = ap.parse_args()
    sys.exit(args.func(args))


if __name__ == "__main__":
    main()
