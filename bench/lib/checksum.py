"""The canonical Nexmark result checksum (bench/limit/row_checksum.h), computed from Flow's output.

A row's canonical text is its fields joined by ',': integers in decimal, timestamps as epoch
milliseconds, strings as they are, floats as round(x * 1000). The checksum is the sum mod 2^64
of the rows' 64-bit FNV-1a hashes, so row order does not matter.
"""

import csv
import datetime
import io

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
MASK = (1 << 64) - 1

# Column kinds of each query's result, in order: i = int, f = float, t = timestamp, s = string.
COLUMNS = {
    "q0": "iiits",
    "q1": "iifts",
    "q2": "ii",
    "q3": "sssi",
    "q5": "iitt",
    "q7": "iiits",
    "q8": "ist",
    "q11": "iitt",
}


def fnv1a64(data: bytes) -> int:
    h = FNV_OFFSET
    for b in data:
        h ^= b
        h = (h * FNV_PRIME) & MASK
    return h


def timestamp_ms(text: str) -> int:
    """Epoch milliseconds of an RFC 3339 timestamp (or of an integer)."""
    text = text.strip()
    if text.lstrip("-").isdigit():
        return int(text)
    parsed = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    delta = parsed - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
    return (delta.days * 86400 + delta.seconds) * 1000 + delta.microseconds // 1000


def java_round(x: float) -> int:
    """Math.round / llround for the non-negative values the queries produce (half away from 0)."""
    import math
    f = math.floor(x)
    return int(f + 1) if x - f >= 0.5 else int(f)


def canonical_field(kind: str, text: str) -> str:
    if kind == "i":
        return str(int(text))
    if kind == "t":
        return str(timestamp_ms(text))
    if kind == "f":
        value = float(text)
        return str(java_round(value * 1000.0) if value >= 0 else -java_round(-value * 1000.0))
    return text


def checksum_csv(query: str, output: str) -> tuple[int, int]:
    """(rows, checksum) of a query's CSV output."""
    kinds = COLUMNS[query]
    rows = 0
    total = 0
    for record in csv.reader(io.StringIO(output)):
        if not record:
            continue
        if len(record) != len(kinds):
            raise ValueError(f"{query}: expected {len(kinds)} columns, got {record!r}")
        text = ",".join(canonical_field(k, v) for k, v in zip(kinds, record))
        total = (total + fnv1a64(text.encode("utf-8"))) & MASK
        rows += 1
    return rows, total
