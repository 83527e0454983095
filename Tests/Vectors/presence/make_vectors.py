#!/usr/bin/env python3
"""Presence-tag vectors (docs/PROTOCOL.md §3), computed independently of Nearcard with PyNaCl's
SipHash-2-4 (nacl.hash.siphash24): t = hex(nonce ‖ SipHash-2-4(key = presence key, message = nonce)).

    .venv/bin/python3 Tests/Vectors/presence/make_vectors.py > Tests/Vectors/presence/tags.json
"""
import json
from nacl.encoding import RawEncoder
from nacl.hash import siphash24

cases = [
    ("sequential key and nonce", bytes(range(16)), bytes(range(8))),
    ("§3 worked example", bytes.fromhex("a0a1a2a3a4a5a6a7a8a9aaabacadaeaf"), bytes.fromhex("0011223344556677")),
    ("zero key", bytes(16), bytes.fromhex("ffffffffffffffff")),
]
out = []
for comment, key, nonce in cases:
    mac = siphash24(nonce, key=key, encoder=RawEncoder)
    out.append({"comment": comment, "presenceKey": key.hex(), "nonce": nonce.hex(), "mac": mac.hex(), "tag": (nonce + mac).hex()})
# The SipHash paper's own vector (Appendix A): key 00…0f, message 00…0e → a129ca6149be45e5 (little-endian).
paper = siphash24(bytes(range(15)), key=bytes(range(16)), encoder=RawEncoder).hex()
print(json.dumps({"source": "PyNaCl nacl.hash.siphash24", "sipHashPaperVector": paper, "tags": out}, indent=2))
