#!/usr/bin/env python3
"""Scrapes a Nearcard node's /metrics and parses it with prometheus_client's own text-format parser
(an independent reader of the exposition format). Prints one JSON object: {"name{label=value,...}": value}
for every sample, labels sorted, and exits 1 if the text does not parse."""
import json
import sys
import urllib.request

from prometheus_client.parser import text_string_to_metric_families


def main():
    url = sys.argv[1]
    with urllib.request.urlopen(url, timeout=10) as response:
        kind = response.headers.get("Content-Type", "")
        text = response.read().decode("utf-8")
    if not kind.startswith("text/plain"):
        print(f"unexpected Content-Type {kind!r}", file=sys.stderr)
        return 1
    samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()) if v != "")
            samples[f"{s.name}{{{labels}}}"] = s.value
    print(json.dumps(samples, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
