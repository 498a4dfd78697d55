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

import argparse
import base64
import datetime
import decimal
import json
import logging
import math
import os
import re
import sys
import time
import uuid

try:
    import fastavro
    from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
    from confluent_kafka.schema_registry.error import SchemaRegistryError
    from confluent_kafka.serialization import MessageField, SerializationContext
except ImportError as e:  # pragma: no cover - depends on the environment
    sys.stderr.write(f"avro_client: {e}; run it with scripts/pyenv python {sys.argv[0]}\n")
    sys.exit(2)

PROG = "avro_client"
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
EPOCH_NAIVE = datetime.datetime(1970, 1, 1)
EPOCH_DATE = datetime.date(1970, 1, 1)
PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}


class UsageError(Exception):
    """Bad input from the caller: exit code 2."""


class Failure(Exception):
    """Kafka, registry or timeout failure: exit code 1."""


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


# ---------------------------------------------------------------------------------------------
# Clients


class _FirstOnly(logging.Filter):
    """Passes each librdkafka log line once (a down broker is otherwise logged every few ms)."""

    def __init__(self):
        super().__init__()
        self.seen = set()

    def filter(self, record):
        text = re.sub(r"\d+", "#", record.getMessage())  # "(after 310ms ...)" differs each time
        if text in self.seen:
            return False
        self.seen.add(text)
        return True


def client_logger():
    log = logging.getLogger("librdkafka")
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(f"{PROG}: librdkafka %(levelname)s %(message)s"))
        handler.addFilter(_FirstOnly())
        log.addHandler(handler)
        log.setLevel(logging.WARNING)
        log.propagate = False
    return log


def kafka_conf(args):
    conf = {"bootstrap.servers": args.brokers, "logger": client_logger()}
    if args.security_protocol:
        conf["security.protocol"] = args.security_protocol
    if args.sasl_mechanism:
        conf["sasl.mechanism"] = args.sasl_mechanism
    if args.sasl_username is not None:
        conf["sasl.username"] = args.sasl_username
    if args.sasl_password_env:
        if args.sasl_password_env not in os.environ:
            raise UsageError(f"--sasl-password-env: environment variable {args.sasl_password_env} is not set")
        conf["sasl.password"] = os.environ[args.sasl_password_env]
    if args.ca:
        if not os.path.isfile(args.ca):
            raise UsageError(f"--ca: no such file {args.ca}")
        conf["ssl.ca.location"] = args.ca
    return conf


def registry_client(url):
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"--registry {url!r} is not an http(s) URL, e.g. http://127.0.0.1:8081/apis/ccompat/v7")
    client = SchemaRegistryClient({"url": url, "timeout": 10, "max.retries": 2, "retries.wait.ms": 200,
                                   "retries.max.wait.ms": 1000})
    try:
        client.get_subjects()
    except SchemaRegistryError as e:
        raise UsageError(f"registry {url} answered GET /subjects with {registry_error(e)} (is this "
                         "the Confluent-compatible base URL?)") from None
    except Exception as e:  # httpx transport errors: refused, DNS, timeout
        raise UsageError(f"registry {url} is unreachable: {type(e).__name__}: {e}") from None
    return client


def give_up(err):
    """Errors after which waiting is pointless: fatal ones and failed SASL authentication
    or TLS (librdkafka itself would retry a wrong password or an untrusted certificate until the
    timeout)."""
    return err.fatal() or err.code() in (KafkaError._AUTHENTICATION, KafkaError._SSL)


def registry_error(e):
    if isinstance(e, SchemaRegistryError):
        text = f"HTTP {e.http_status_code}, error code {e.error_code}"
        return f"{text}: {e.error_message}" if e.error_message else text
    return f"{type(e).__name__}: {e}"


def cmd_produce(args):
    try:
        with open(args.schema, encoding="utf-8") as f:
            schema_text = f.read()
    except OSError as e:
        raise UsageError(f"--schema: {e}") from None
    named = {}
    codec = Codec(parse_schema(schema_text, named, args.schema), named)
    records = []
    try:
        with open(args.records, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except ValueError as e:
                    raise UsageError(f"{args.records}:{n}: not JSON: {e}") from None
                if args.key_field is not None:
                    if not isinstance(obj, dict) or args.key_field not in obj:
                        raise UsageError(f"{args.records}:{n}: no field {args.key_field!r} for --key-field")
                    key = obj[args.key_field]
                    key = None if key is None else (key if isinstance(key, str) else json.dumps(key))
                else:
                    key = None
                try:
                    value = codec.from_json(obj)
                except UsageError as e:
                    raise UsageError(f"{args.records}:{n}: {e}") from None
                records.append((n, key, value))
    except OSError as e:
        raise UsageError(f"--records: {e}") from None

    conf = kafka_conf(args)
    registry = registry_client(args.registry)
    serializer = AvroSerializer(registry, schema_text, conf={"auto.register.schemas": True})
    ctx = SerializationContext(args.topic, MessageField.VALUE)
    errors = []
    stop = []  # a fatal or authentication error: no use waiting for delivery

    def on_error(err):
        errors.append(f"client error: {err}")
        if give_up(err):
            stop.append(err)

    conf.update({"acks": "all", "enable.idempotence": True, "linger.ms": 5,
                 "message.timeout.ms": int(args.timeout * 1000), "error_cb": on_error})
    producer = Producer(conf)
    delivered = [0]

    def on_delivery(err, msg):
        if err is not None:
            if err.code() != KafkaError._PURGE_QUEUE:  # purged by us after an earlier error
                errors.append(f"delivery failed: {err}")
        else:
            delivered[0] += 1

    for n, key, value in records:
        try:
            payload = serializer(value, ctx)
        except SchemaRegistryError as e:
            raise Failure(f"the registry refused the schema for subject {args.topic}-value: "
                          f"{registry_error(e)}") from None
        except Exception as e:  # fastavro: ValueError/TypeError for values that do not fit
            if type(e).__module__.startswith(("httpx", "httpcore")):
                raise Failure(f"registry request failed: {registry_error(e)}") from None
            raise UsageError(f"{args.records}:{n}: does not fit the schema: {type(e).__name__}: {e}") from None
        while True:
            try:
                producer.produce(args.topic, value=payload,
                                 key=None if key is None else key.encode("utf-8"), on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.1)
            except KafkaException as e:
                raise Failure(f"produce to {args.topic} failed: {e}") from None
        producer.poll(0)
    deadline = time.monotonic() + args.timeout
    remaining = len(producer)
    while remaining and not stop and time.monotonic() < deadline:
        remaining = producer.flush(min(0.2, max(0.0, deadline - time.monotonic())))
    if remaining:
        if not stop:
            errors.append(f"{remaining} record(s) not delivered within {args.timeout:g}s")
        producer.purge()
        producer.flush(0)
    if delivered[0] != len(records):
        detail = "; ".join(dict.fromkeys(errors)) or "unknown error"
        raise Failure(f"sent {delivered[0]} of {len(records)} record(s) to {args.topic} "
                      f"at {args.brokers}: {detail}")
    print(delivered[0])
    return 0


def cmd_consume(args):
    if args.count < 0:
        raise UsageError("--count must not be negative")
    conf = kafka_conf(args)
    registry = registry_client(args.registry)
    deserializer = AvroDeserializer(registry)
    ctx = SerializationContext(args.topic, MessageField.VALUE)
    codecs = {}
    errors = []
    stop = []

    def on_error(err):
        errors.append(str(err))
        if give_up(err):
            stop.append(err)

    conf.update({
        "group.id": f"avro-client-{uuid.uuid4()}",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "isolation.level": args.isolation,
        "error_cb": on_error,
    })
    consumer = Consumer(conf)
    printed = 0
    deadline = time.monotonic() + args.timeout
    try:
        consumer.subscribe([args.topic])
        while printed < args.count:
            if stop:
                raise Failure(f"read {printed} of {args.count} record(s) from {args.topic} at "
                              f"{args.brokers}: {stop[0]}")
            left = deadline - time.monotonic()
            if left <= 0:
                last = f" (last client error: {errors[-1]})" if errors else ""
                raise Failure(f"timeout after {args.timeout:g}s: read {printed} of {args.count} "
                              f"record(s) from {args.topic} at {args.brokers}{last}")
            msg = consumer.poll(min(left, 0.5))
            if msg is None:
                continue
            if msg.error():
                if msg.error().fatal():
                    raise Failure(f"consumer failed: {msg.error()}")
                errors.append(str(msg.error()))
                continue
            raw = msg.value()
            where = f"{args.topic}[{msg.partition()}]@{msg.offset()}"
            if raw is None:
                out = None
            else:
                if len(raw) < 5 or raw[0] != 0:
                    raise Failure(f"{where}: not Confluent wire format (first bytes {raw[:5].hex()})")
                schema_id = int.from_bytes(raw[1:5], "big")
                try:
                    value = deserializer(raw, ctx)
                    if schema_id not in codecs:
                        codecs[schema_id] = writer_codec(registry, schema_id)
                except SchemaRegistryError as e:
                    raise Failure(f"{where}: schema id {schema_id}: {registry_error(e)}") from None
                except Exception as e:
                    raise Failure(f"{where}: cannot decode with schema id {schema_id}: "
                                  f"{type(e).__name__}: {e}") from None
                out = codecs[schema_id].to_json(value)
            sys.stdout.write(json.dumps(out, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n")
            sys.stdout.flush()
            printed += 1
    finally:
        consumer.close()
    return 0


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


class Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        raise UsageError(message)


def positive_seconds(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not v > 0:
        raise argparse.ArgumentTypeError("must be more than 0 seconds")
    return v


def main(argv):
    parser = Parser(prog=PROG, description="Avro (Confluent wire format) producer and consumer "
                    "using confluent_kafka's serializers and a schema registry.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    def common(p):
        p.add_argument("--brokers", required=True, help="bootstrap servers, e.g. 127.0.0.1:9092")
        p.add_argument("--topic", required=True)
        p.add_argument("--registry", required=True,
                       help="Confluent-compatible registry base URL, e.g. http://127.0.0.1:8081/apis/ccompat/v7")
        p.add_argument("--security-protocol", choices=["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"])
        p.add_argument("--sasl-mechanism", choices=["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
        p.add_argument("--sasl-username")
        p.add_argument("--sasl-password-env", metavar="VAR", help="read the SASL password from this env variable")
        p.add_argument("--ca", metavar="FILE", help="CA certificate (PEM) to trust for the brokers' TLS")

    p = sub.add_parser("produce", help="serialize JSON lines and send them")
    common(p)
    p.add_argument("--schema", required=True, metavar="FILE.avsc")
    p.add_argument("--records", required=True, metavar="FILE.jsonl")
    p.add_argument("--key-field", metavar="F", help="use this field's value (as text) as the message key")
    p.add_argument("--timeout", type=positive_seconds, default=30.0,
                   help="seconds for delivery (default 30)")
    p = sub.add_parser("consume", help="read from the beginning and print JSON lines")
    common(p)
    p.add_argument("--count", type=int, required=True, help="records to read")
    p.add_argument("--timeout", type=positive_seconds, required=True, help="seconds to wait for them")
    p.add_argument("--isolation", choices=["read_committed", "read_uncommitted"], default="read_committed")

    try:
        args = parser.parse_args(argv)
        return cmd_produce(args) if args.command == "produce" else cmd_consume(args)
    except UsageError as e:
        sys.stderr.write(f"{PROG}: {e}\n")
        return 2
    except Failure as e:
        sys.stderr.write(f"{PROG}: {e}\n")
        return 1
    except KafkaException as e:
        sys.stderr.write(f"{PROG}: Kafka client error: {e}\n")
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
