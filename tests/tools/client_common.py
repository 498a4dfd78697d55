"""What the Kafka test clients in this directory, avro_client.py and protobuf_client.py, share
(both import it as `client_common`, found in the script's own directory): the error classes and
exit codes, the Kafka client configuration (brokers, SASL, TLS, librdkafka's log), the schema
registry client and the text of its errors, reading the JSON-lines records file, the producer's
send-and-flush loop, the consumer's read loop, and the command-line arguments both take.

The format-specific parts (converting a record to and from JSON, serializing, checking the wire
framing, decoding a value) stay in each client and come in here as callables.
"""

import argparse
import json
import logging
import os
import re
import sys
import time
import uuid

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError


class UsageError(Exception):
    """Bad input from the caller: exit code 2."""


class Failure(Exception):
    """Kafka, registry or timeout failure: exit code 1."""


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


def client_logger(prog):
    log = logging.getLogger("librdkafka")
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(f"{prog}: librdkafka %(levelname)s %(message)s"))
        handler.addFilter(_FirstOnly())
        log.addHandler(handler)
        log.setLevel(logging.WARNING)
        log.propagate = False
    return log


def kafka_conf(args, prog):
    conf = {"bootstrap.servers": args.brokers, "logger": client_logger(prog)}
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


def is_http_error(e):
    return type(e).__module__.startswith(("httpx", "httpcore"))


# ---------------------------------------------------------------------------------------------
# produce


def read_records(path, key_field, convert):
    """The records of the JSON-lines file `path` (blank lines skipped) as (line number, key,
    value): the key is the `key_field` value as text (None without one), the value what
    convert(JSON value) returns; a UsageError of convert is prefixed with path:line."""
    records = []
    try:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except ValueError as e:
                    raise UsageError(f"{path}:{n}: not JSON: {e}") from None
                if key_field is not None:
                    if not isinstance(obj, dict) or key_field not in obj:
                        raise UsageError(f"{path}:{n}: no field {key_field!r} for --key-field")
                    key = obj[key_field]
                    key = None if key is None else (key if isinstance(key, str) else json.dumps(key))
                else:
                    key = None
                try:
                    value = convert(obj)
                except UsageError as e:
                    raise UsageError(f"{path}:{n}: {e}") from None
                records.append((n, key, value))
    except OSError as e:
        raise UsageError(f"--records: {e}") from None
    return records


def send_records(args, conf, records, serialize, subject, misfit):
    """Sends `records` (from read_records) to --topic in order with an idempotent producer
    (acks=all), each value as serialize(value) makes it, flushes, and prints how many were sent.
    A registry error while serializing is a Failure naming `subject`; any other error of
    serialize a UsageError "<records>:<line>: <misfit>: ..."."""
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
            payload = serialize(value)
        except SchemaRegistryError as e:
            raise Failure(f"the registry refused the schema for subject {subject}: "
                          f"{registry_error(e)}") from None
        except Exception as e:  # the serializer's errors for values that do not fit
            if is_http_error(e):
                raise Failure(f"registry request failed: {registry_error(e)}") from None
            raise UsageError(f"{args.records}:{n}: {misfit}: {type(e).__name__}: {e}") from None
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


# ---------------------------------------------------------------------------------------------
# consume


def framed_schema_id(raw, where, min_len):
    """The schema id of a value in Confluent's wire format (magic byte 0, 4-byte big-endian schema
    id) that is at least `min_len` bytes long; a Failure if it is not."""
    if len(raw) < min_len or raw[0] != 0:
        raise Failure(f"{where}: not Confluent wire format (first bytes {raw[:min_len].hex()})")
    return int.from_bytes(raw[1:5], "big")


def print_records(args, conf, group, decode):
    """Reads --topic from the beginning with a fresh consumer group (`group`-<uuid>) and prints
    --count values as JSON lines (sorted keys): null for a null value, else what
    decode(raw value, "topic[partition]@offset") returns. A Failure after --timeout seconds."""
    errors = []
    stop = []

    def on_error(err):
        errors.append(str(err))
        if give_up(err):
            stop.append(err)

    conf.update({
        "group.id": f"{group}-{uuid.uuid4()}",
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
            out = None if raw is None else decode(raw, f"{args.topic}[{msg.partition()}]@{msg.offset()}")
            sys.stdout.write(json.dumps(out, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n")
            sys.stdout.flush()
            printed += 1
    finally:
        consumer.close()
    return 0


# ---------------------------------------------------------------------------------------------
# Command line


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


def command_parser(prog, description):
    """The program's Parser and its subcommands (Parsers too)."""
    parser = Parser(prog=prog, description=description)
    return parser, parser.add_subparsers(dest="command", required=True, parser_class=Parser)


def add_registry_arg(p, required=True):
    p.add_argument("--registry", required=required,
                   help="Confluent-compatible registry base URL, e.g. http://127.0.0.1:8081/apis/ccompat/v7")


def add_topic_args(p, registry_required=True):
    """--brokers, --topic and --registry."""
    p.add_argument("--brokers", required=True, help="bootstrap servers, e.g. 127.0.0.1:9092")
    p.add_argument("--topic", required=True)
    add_registry_arg(p, registry_required)


def add_security_args(p):
    p.add_argument("--security-protocol", choices=["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"])
    p.add_argument("--sasl-mechanism", choices=["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
    p.add_argument("--sasl-username")
    p.add_argument("--sasl-password-env", metavar="VAR", help="read the SASL password from this env variable")
    p.add_argument("--ca", metavar="FILE", help="CA certificate (PEM) to trust for the brokers' TLS")


def add_produce_parser(sub, common):
    """The produce subcommand with common(p)'s arguments; the caller adds the rest."""
    p = sub.add_parser("produce", help="serialize JSON lines and send them")
    common(p)
    return p


def add_records_args(p):
    p.add_argument("--records", required=True, metavar="FILE.jsonl")
    p.add_argument("--key-field", metavar="F", help="use this field's value (as text) as the message key")


def add_delivery_timeout(p):
    p.add_argument("--timeout", type=positive_seconds, default=30.0,
                   help="seconds for delivery (default 30)")


def add_consume_parser(sub, common):
    """The consume subcommand: common(p)'s arguments, then --count, --timeout, --isolation."""
    p = sub.add_parser("consume", help="read from the beginning and print JSON lines")
    common(p)
    p.add_argument("--count", type=int, required=True, help="records to read")
    p.add_argument("--timeout", type=positive_seconds, required=True, help="seconds to wait for them")
    p.add_argument("--isolation", choices=["read_committed", "read_uncommitted"], default="read_committed")
    return p


def run(prog, command, registry_failures=False):
    """command()'s exit code, or the exit code of its error, told on stderr: 2 for a UsageError;
    1 for a Failure, a Kafka client error and, with `registry_failures`, a failed registry
    request; 130 for Ctrl-C. Other errors propagate."""
    try:
        return command()
    except UsageError as e:
        sys.stderr.write(f"{prog}: {e}\n")
        return 2
    except Failure as e:
        sys.stderr.write(f"{prog}: {e}\n")
        return 1
    except KafkaException as e:
        sys.stderr.write(f"{prog}: Kafka client error: {e}\n")
        return 1
    except Exception as e:
        if not (registry_failures and is_http_error(e)):
            raise
        sys.stderr.write(f"{prog}: registry request failed: {registry_error(e)}\n")
        return 1
    except KeyboardInterrupt:
        return 130


# ---------------------------------------------------------------------------------------------
# For end-to-end tests (tests/codegen_io/*/): topics, and what a topic holds once committed.


def create_topics(conf, names, partitions):
    """Creates `names` with `partitions` each (replication 1), through a client of `conf`."""
    admin = AdminClient(conf)
    futures = admin.create_topics([NewTopic(n, num_partitions=partitions, replication_factor=1) for n in names])
    for f in futures.values():
        f.result(30)


def read_committed(conf, topic, timeout):
    """Every value of `topic` (read_committed), until `timeout` seconds pass without one more."""
    c = Consumer(dict(conf, **{"group.id": "check-" + uuid.uuid4().hex, "auto.offset.reset": "earliest",
                               "enable.auto.commit": False, "isolation.level": "read_committed"}))
    c.subscribe([topic])
    out, last = [], time.time()
    while time.time() - last < timeout:
        m = c.poll(0.5)
        if m is None or m.error():
            continue
        out.append(m.value())
        last = time.time()
    c.close()
    return out
