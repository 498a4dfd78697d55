#!/usr/bin/env python3
"""Produces and consumes Avro records in Confluent's wire format (magic byte 0, 4-byte big-endian
schema id, Avro binary) with Confluent's own Python client: confluent_kafka's AvroSerializer and
AvroDeserializer (fastavro underneath) and its SchemaRegistryClient. It is the independent peer of
Flow's `format avro` in tests. Run it with the venv of scripts/pyenv:

  scripts/pyenv python tests/tools/avro_client.py produce --brokers 127.0.0.1:9092 --topic t \
      --registry http://127.0.0.1:8081/apis/ccompat/v7 --schema s.avsc --records r.jsonl
  scripts/pyenv python tests/tools/avro_client.py consume --brokers 127.0.0.1:9092 --topic t \
      --registry http://127.0.0.1:8081/apis/ccompat/v7 --count 5 --timeout 30

produce: serializes each line of --records (one JSON object a line; blank lines skipped) with the
  schema of --schema, registering it under the subject <topic>-value (auto-register), sends them
  in order (idempotent producer, acks=all; the key is the --key-field value as UTF-8 text, else
  none), flushes, and prints the number of records sent.
consume: reads --topic from the beginning with a fresh consumer group, decodes each value with
  the schema its id names, and prints one JSON object a line (sorted keys); exits 0 as soon as
  --count records were printed, 1 if --timeout seconds passed first.

JSON <-> Avro, by the schema (so a produce/consume round trip prints what was read):
  bytes, fixed: base64 text          decimal (bytes or fixed): a string like "12.30" (or a number)
  date: days since 1970-01-01        time-millis / time-micros: ms / us since midnight
  timestamp-millis / -micros, local-timestamp-millis / -micros: ms / us since the epoch
  uuid: text   enum: the symbol   union: the plain value (not Avro JSON's {"type": value} form)
  float/double NaN and infinities: the strings "NaN", "Infinity", "-Infinity"
  A null (tombstone) record value prints as null.

Exit codes: 0 done; 1 Kafka or registry failure (delivery error, schema refused, e.g. 409
incompatible, undecodable record, consume timeout); 2 bad usage: arguments, unreadable or invalid
schema or records file, a record that does not fit the schema, registry unreachable.
"""

import base64
import datetime
import decimal
import json
import math
import sys
import uuid

try:
    import fastavro
    from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
    from confluent_kafka.schema_registry.error import SchemaRegistryError
    from confluent_kafka.serialization import MessageField, SerializationContext
except ImportError as e:  # pragma: no cover - depends on the environment
    sys.stderr.write(f"avro_client: {e}; run it with scripts/pyenv python {sys.argv[0]}\n")
    sys.exit(2)

from client_common import (Failure, UsageError, add_consume_parser, add_delivery_timeout,
                           add_produce_parser, add_records_args, add_security_args, add_topic_args,
                           command_parser, framed_schema_id, kafka_conf, print_records,
                           read_records, registry_client, registry_error, run, send_records)

PROG = "avro_client"
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
EPOCH_NAIVE = datetime.datetime(1970, 1, 1)
EPOCH_DATE = datetime.date(1970, 1, 1)
PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}


# ---------------------------------------------------------------------------------------------
# Schema-driven conversion between JSON values and the Python values fastavro reads and writes.


class Codec:
    """Walks a schema (fastavro-parsed, so named types are full names) beside a value."""

    def __init__(self, parsed, named):
        self.root = parsed
        self.named = named

    def resolve(self, s):
        while isinstance(s, str) and s not in PRIMITIVES:
            if s not in self.named:
                raise UsageError(f"unknown named type {s!r} in the schema")
            s = self.named[s]
        return s

    @staticmethod
    def kind(s):
        """(type name, logical type or None) of a resolved schema."""
        if isinstance(s, str):
            return s, None
        if isinstance(s, list):
            return "union", None
        t = s["type"]
        if isinstance(t, (dict, list)) or (isinstance(t, str) and t not in PRIMITIVES and t not in
                                             ("record", "error", "enum", "fixed", "array", "map")):
            return "wrapped", None  # {"type": <another schema>}
        return ("record" if t == "error" else t), s.get("logicalType")

    # --- JSON -> Avro (produce) ---

    def from_json(self, value, s=None, path="$"):
        s = self.resolve(self.root if s is None else s)
        t, logical = self.kind(s)
        if t == "wrapped":
            return self.from_json(value, s["type"], path)
        if t == "union":
            return self.from_json(value, self.pick_json_branch(s, value, path), path)
        if value is None:
            return None  # fastavro reports the mismatch if the type is not null
        if logical == "decimal" and t in ("bytes", "fixed"):
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                raise UsageError(f"{path}: a decimal is a string like \"12.30\" or a number")
            try:
                return decimal.Decimal(str(value))
            except decimal.InvalidOperation:
                raise UsageError(f"{path}: {value!r} is not a decimal number") from None
        if t in ("bytes", "fixed"):
            if not isinstance(value, str):
                raise UsageError(f"{path}: {t} values are base64 text in JSON")
            try:
                return base64.b64decode(value, validate=True)
            except ValueError:
                raise UsageError(f"{path}: {value!r} is not base64") from None
        if t in ("float", "double") and isinstance(value, str):
            special = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
            if value in special:
                return special[value]
        if t == "record":
            if not isinstance(value, dict):
                raise UsageError(f"{path}: a record is a JSON object")
            names = {f["name"] for f in s["fields"]}
            extra = sorted(set(value) - names)
            if extra:
                raise UsageError(f"{path}: field(s) {', '.join(extra)} not in record {s.get('name')}")
            return {f["name"]: self.from_json(value[f["name"]], f["type"], f"{path}.{f['name']}")
                    for f in s["fields"] if f["name"] in value}
        if t == "array" and isinstance(value, list):
            return [self.from_json(v, s["items"], f"{path}[{i}]") for i, v in enumerate(value)]
        if t == "map" and isinstance(value, dict):
            return {k: self.from_json(v, s["values"], f"{path}.{k}") for k, v in value.items()}
        return value  # numbers, strings, booleans, enum symbols, logical ints: fastavro checks

    def pick_json_branch(self, union, value, path):
        branches = [self.resolve(b) for b in union]
        kinds = [self.kind(b) for b in branches]
        order = []
        if value is None:
            order = ["null"]
        elif isinstance(value, bool):
            order = ["boolean"]
        elif isinstance(value, int):
            order = ["int", "long", "float", "double"]
        elif isinstance(value, float):
            order = ["double", "float"]
        elif isinstance(value, str):
            order = ["string", "enum", "float", "double", "bytes", "fixed"]
        elif isinstance(value, list):
            order = ["array"]
        elif isinstance(value, dict):
            keys = set(value)
            for b, (t, _) in zip(branches, kinds):
                if t == "record" and keys <= {f["name"] for f in b["fields"]}:
                    return b
            order = ["map"]
        for want in order:
            for b, (t, logical) in zip(branches, kinds):
                if t == want or (t == "wrapped" and self.kind(self.resolve(b["type"]))[0] == want):
                    if want == "enum" and value not in b.get("symbols", []):
                        continue
                    if want in ("bytes", "fixed") and logical == "decimal" and not _is_number_text(value):
                        continue
                    return b
        raise UsageError(f"{path}: {json.dumps(value)[:60]} fits no branch of the union "
                         f"{[k[0] for k in kinds]}")

    # --- Avro -> JSON (consume) ---

    def to_json(self, value, s=None):
        s = self.resolve(self.root if s is None else s)
        t, logical = self.kind(s)
        if t == "wrapped":
            return self.to_json(value, s["type"])
        if t == "union":
            for b in s:
                if self.fits(value, self.resolve(b)):
                    return self.to_json(value, b)
            return generic_json(value)
        if value is None:
            return None
        if t == "record" and isinstance(value, dict):
            by_name = {f["name"]: f["type"] for f in s["fields"]}
            return {k: self.to_json(v, by_name[k]) if k in by_name else generic_json(v)
                    for k, v in value.items()}
        if t == "array" and isinstance(value, list):
            return [self.to_json(v, s["items"]) for v in value]
        if t == "map" and isinstance(value, dict):
            return {k: self.to_json(v, s["values"]) for k, v in value.items()}
        return logical_json(value, logical)

    def fits(self, value, s):
        t, logical = self.kind(s)
        if t == "wrapped":
            return self.fits(value, self.resolve(s["type"]))
        if value is None:
            return t == "null"
        if isinstance(value, bool):
            return t == "boolean"
        if isinstance(value, datetime.datetime):
            return logical is not None and logical.endswith(("timestamp-millis", "timestamp-micros"))
        if isinstance(value, datetime.date):
            return logical == "date"
        if isinstance(value, datetime.time):
            return logical in ("time-millis", "time-micros")
        if isinstance(value, decimal.Decimal):
            return logical == "decimal"
        if isinstance(value, uuid.UUID):
            return logical == "uuid"
        if isinstance(value, int):
            return t in ("int", "long") and logical is None
        if isinstance(value, float):
            return t in ("float", "double")
        if isinstance(value, str):
            return t == "string" or (t == "enum" and value in s.get("symbols", []))
        if isinstance(value, bytes):
            return t in ("bytes", "fixed") and logical != "decimal"
        if isinstance(value, list):
            return t == "array"
        if isinstance(value, dict):
            if t == "record":
                return set(value) == {f["name"] for f in s["fields"]}
            return t == "map"
        return False


def _is_number_text(value):
    try:
        decimal.Decimal(str(value))
        return True
    except decimal.InvalidOperation:
        return False


def logical_json(value, logical):
    if isinstance(value, datetime.datetime):
        micros = logical is not None and logical.endswith("-micros")
        if value.tzinfo is None:
            delta = value - EPOCH_NAIVE
        else:
            delta = value - EPOCH
        us = (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
        return us if micros else us // 1000
    if isinstance(value, datetime.date):
        return (value - EPOCH_DATE).days
    if isinstance(value, datetime.time):
        us = ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond
        return us if logical == "time-micros" else us // 1000
    return generic_json(value)


def generic_json(value):
    """JSON-safe form of a value without schema guidance."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, (decimal.Decimal, uuid.UUID)):
        return str(value)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): generic_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [generic_json(v) for v in value]
    return value


def parse_schema(text, named, origin):
    try:
        obj = json.loads(text)
    except ValueError as e:
        raise UsageError(f"{origin} is not JSON: {e}") from None
    try:
        return fastavro.parse_schema(obj, named)
    except Exception as e:  # fastavro raises several types for bad schemas
        raise UsageError(f"{origin} is not a valid Avro schema: {e}") from None


def cmd_produce(args):
    try:
        with open(args.schema, encoding="utf-8") as f:
            schema_text = f.read()
    except OSError as e:
        raise UsageError(f"--schema: {e}") from None
    named = {}
    codec = Codec(parse_schema(schema_text, named, args.schema), named)
    records = read_records(args.records, args.key_field, codec.from_json)

    conf = kafka_conf(args, PROG)
    registry = registry_client(args.registry)
    serializer = AvroSerializer(registry, schema_text, conf={"auto.register.schemas": True})
    ctx = SerializationContext(args.topic, MessageField.VALUE)
    # A value that does not fit: fastavro's ValueError or TypeError.
    return send_records(args, conf, records, lambda value: serializer(value, ctx),
                        f"{args.topic}-value", "does not fit the schema")


def cmd_consume(args):
    if args.count < 0:
        raise UsageError("--count must not be negative")
    conf = kafka_conf(args, PROG)
    registry = registry_client(args.registry)
    deserializer = AvroDeserializer(registry)
    ctx = SerializationContext(args.topic, MessageField.VALUE)
    codecs = {}

    def decode(raw, where):
        schema_id = framed_schema_id(raw, where, 5)
        try:
            value = deserializer(raw, ctx)
            if schema_id not in codecs:
                codecs[schema_id] = writer_codec(registry, schema_id)
        except SchemaRegistryError as e:
            raise Failure(f"{where}: schema id {schema_id}: {registry_error(e)}") from None
        except Exception as e:
            raise Failure(f"{where}: cannot decode with schema id {schema_id}: "
                          f"{type(e).__name__}: {e}") from None
        return codecs[schema_id].to_json(value)

    return print_records(args, conf, "avro-client", decode)


def writer_codec(registry, schema_id):
    """The Codec of a writer schema, with the schemas it references (recursively) named first."""
    schema = registry.get_schema(schema_id)
    named = {}
    seen = set()

    def add_refs(s):
        for ref in s.references or []:
            if (ref.subject, ref.version) in seen:
                continue
            seen.add((ref.subject, ref.version))
            registered = registry.get_version(ref.subject, ref.version)
            add_refs(registered.schema)
            parse_schema(registered.schema.schema_str, named, f"reference {ref.name}")

    add_refs(schema)
    return Codec(parse_schema(schema.schema_str, named, f"schema id {schema_id}"), named)


# ---------------------------------------------------------------------------------------------


def main(argv):
    parser, sub = command_parser(PROG, "Avro (Confluent wire format) producer and consumer "
                                 "using confluent_kafka's serializers and a schema registry.")

    def common(p):
        add_topic_args(p)
        add_security_args(p)

    p = add_produce_parser(sub, common)
    p.add_argument("--schema", required=True, metavar="FILE.avsc")
    add_records_args(p)
    add_delivery_timeout(p)
    add_consume_parser(sub, common)

    def parse_and_run():
        args = parser.parse_args(argv)
        return cmd_produce(args) if args.command == "produce" else cmd_consume(args)

    return run(PROG, parse_and_run)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
