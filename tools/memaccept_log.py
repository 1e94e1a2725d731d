#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# memaccept: read the JSON Lines events out of a serial console log.
"""Events are lines that start with {"event": (DESIGN.md section 5). Everything else on
the console (firmware output, human-readable lines) is ignored. A line that starts like
an event but is not valid JSON (a truncated log, a garbled serial line) is returned in
`bad` so that callers can say so instead of crashing."""
import json

EVENT_PREFIX = '{"event":'

# Mirrors include/exit_codes.h.
EXIT_CODES = {
    0: "ok", 1: "test failed", 2: "panic", 3: "exception", 4: "unaccepted memory access",
    5: "out of memory", 6: "boot failed", 7: "platform fatal", 8: "host hostile",
    9: "bad configuration",
}


def parse_events(text):
    """Returns (events, bad_lines)."""
    events, bad = [], []
    for line in text.splitlines():
        line = line.strip("\r\n\x00 ")
        i = line.find(EVENT_PREFIX)
        if i < 0:
            continue
        try:
            ev = json.loads(line[i:])
        except ValueError:
            bad.append(line)
            continue
        if isinstance(ev, dict) and isinstance(ev.get("event"), str):
            events.append(ev)
        else:
            bad.append(line)
    return events, bad


def first(events, name):
    for e in events:
        if e.get("event") == name:
            return e
    return None


def all_of(events, name):
    return [e for e in events if e.get("event") == name]
