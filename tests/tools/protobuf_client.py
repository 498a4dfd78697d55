#!/usr/bin/env python3
"""Produces and consumes Protobuf messages in Confluent's wire format (magic byte 0, 4-byte
big-endian schema id, the message-index list as zigzag varints -- the single byte 0x00 for the
first top-level message -- then the Protobuf binary) with Confluent's own Python client:
confluent_kafka's ProtobufSerializer and ProtobufDeserializer (google.protobuf underneath) and its
SchemaRegistryClient. It is the independent peer of Flow's `format protobuf` in tests. The .proto
file is compiled at run time with protoc (Debian's protobuf-compiler, see scripts/setup); no
generated code is kept. Run it with the venv of scripts/pyenv:

  scripts/pyenv python tests/tools/protobuf_client.py produce --brokers 127.0.0.1:9092 --topic t \
      --registry http://127.0.0.1:8081/apis/ccompat/v7 --proto m.proto --message pkg.M --records r.jsonl
  scripts/pyenv python tests/tools/protobuf_client.py consume --brokers 127.0.0.1:9092 --topic t \
      --registry http://127.0.0.1:8081/apis/ccompat/v7 --proto m.proto --message pkg.M --count 5 --timeout 30
  scripts/pyenv python tests/tools/protobuf_client.py schema \
      --registry http://127.0.0.1:8081/apis/ccompat/v7 --subject t-value --decode

--message is the full name of a message of --proto (package included; nested types as Outer.Inner).
--proto-path DIR (repeatable) is where imports are looked up (default: the directory of --proto);
google/protobuf/*.proto come with protoc.

produce: converts each line of --records (one JSON object a line, Protobuf's JSON mapping:
  json_format.ParseDict, so unknown fields are refused; blank lines skipped; a line `null` sends a
  null value, a tombstone) to --message, serializes it and sends them in order (idempotent
  producer, acks=all; the key is the --key-field value as UTF-8 text, else none), flushes, and
  prints the number of records sent. The schema goes under the subject --subject (default
  <topic>-value):
    --register-as descriptor (default): as ProtobufSerializer does it (auto-register): the base64
      of the serialized FileDescriptorProto of --proto; imports other than google/protobuf/* are
      registered the same way as references, each under its file name as the subject.
    --register-as text: the .proto text itself, imports (other than google/protobuf/*) as
      references registered as text under their file names, as a non-Python producer does; the
      message is then framed with that id by the same serializer (Confluent's framing code).
consume: reads --topic from the beginning with a fresh consumer group, checks the framing, fetches
  the writer schema of each new id from the registry (base64 FileDescriptorProto or .proto text,
  both accepted) and checks that the message-index list names --message in it, decodes the value
  with ProtobufDeserializer as --message, and prints one JSON object a line (sorted keys); exits 0
  as soon as --count records were printed, 1 if --timeout seconds passed first. (The deserializer
  is given no registry client: with one it base64-decodes the writer schema itself and fails on
  .proto text, which Apicurio returns as registered.)
--plain (produce and consume, instead of --registry): plain messages without a registry, the value
  being the message's bytes alone (what services with compiled-in schemas write); consume decodes
  every value as --message.
schema: prints the registry's schema for --id N, or for --subject S [--version V] (default the
  latest), as one JSON object: {"id", "schema", "schemaType", "references": [{"name", "subject",
  "version"}], plus "subject" and "version" for --subject}; with --decode also "form"
  ("descriptor" or "text") and "file": the schema's FileDescriptorProto in Protobuf's JSON mapping
  with proto field names (a text schema is compiled with protoc, its references fetched; its
  "name" is then "registered.proto").

JSON printed by consume (json_format.MessageToDict, then 64-bit integers made numbers):
  field names are the .proto names (preserving_proto_field_name);
  fields without presence (proto3 singular scalars and enums not marked `optional`, repeated and
  map fields) are always printed, with their default value when unset (0, "", false, the enum's
  first value name, [], {}); fields with presence (proto3 `optional`, message-typed fields, oneof
  members, proto2 optional/required) are printed only when set: an absent key means unset;
  int64, uint64, sint64, fixed64, sfixed64 (also google.protobuf.Int64Value / UInt64Value) are
  JSON numbers, exact, not the strings of Protobuf's JSON mapping (map keys stay strings);
  bytes: base64 text; enums: the value name (a number if the value is unknown);
  float/double NaN and infinities: "NaN", "Infinity", "-Infinity";
  google.protobuf.Timestamp: RFC 3339 text in UTC ("1970-01-01T00:00:01Z"); Duration: "1.5s";
  wrappers: the plain value; Struct/Value/ListValue: plain JSON.
  A null (tombstone) record value prints as null.

Exit codes: 0 done; 1 Kafka or registry failure (delivery error, schema refused, e.g. 409
incompatible, undecodable record or writer schema, message index not naming --message, consume
timeout, unknown schema id or subject); 2 bad usage: arguments, protoc missing, unreadable or
invalid .proto, unknown --message, unreadable records file, a record that does not fit the
message, registry unreachable.
"""

import base64
import binascii
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import uuid

try:
    from confluent_kafka.schema_registry import Schema, SchemaReference
    from confluent_kafka.schema_registry.error import SchemaRegistryError
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
    from confluent_kafka.schema_registry.serde import SchemaId
    from confluent_kafka.serialization import MessageField, SerializationContext
    from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
    from google.protobuf.descriptor import FieldDescriptor
except ImportError as e:  # pragma: no cover - depends on the environment
    sys.stderr.write(f"protobuf_client: {e}; run it with scripts/pyenv python {sys.argv[0]}\n")
    sys.exit(2)

from client_common import (Failure, UsageError, add_consume_parser, add_delivery_timeout,
                           add_produce_parser, add_records_args, add_registry_arg,
                           add_security_args, add_topic_args, command_parser, framed_schema_id,
                           kafka_conf, print_records, read_records, registry_client, registry_error,
                           run, send_records)

PROG = "protobuf_client"
SUBJECT_STRATEGY = {"subject.name.strategy.type": "TOPIC"}  # <topic>-value, no association lookup
BUILTIN_IMPORTS = ("google/protobuf/",)  # come with protoc; never registered as references
INT64_TYPES = {FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_SINT64,
               FieldDescriptor.TYPE_FIXED64, FieldDescriptor.TYPE_SFIXED64}
INT64_WRAPPERS = {"google.protobuf.Int64Value", "google.protobuf.UInt64Value"}


# ---------------------------------------------------------------------------------------------
# .proto compilation (protoc) and message classes


def protoc_path():
    path = shutil.which("protoc")
    if path is None:
        raise UsageError("protoc not found (Debian's protobuf-compiler); run scripts/setup")
    return path


def run_protoc(proto, include_dirs, workdir, descriptor_set_in=None):
    """Compiles `proto` (a path on disk) and returns its FileDescriptorSet, imports included, in
    dependency order (the file itself last). Raises UsageError with protoc's message."""
    out = os.path.join(workdir, f"set-{uuid.uuid4().hex}.pb")
    cmd = [protoc_path(), f"--descriptor_set_out={out}", "--include_imports"]
    cmd += [f"--proto_path={d}" for d in include_dirs]
    if descriptor_set_in:
        cmd.append(f"--descriptor_set_in={descriptor_set_in}")
    cmd.append(proto)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise UsageError(f"protoc cannot compile {proto}: {(r.stderr or r.stdout).strip()}")
    with open(out, "rb") as f:
        return descriptor_pb2.FileDescriptorSet.FromString(f.read())


class Proto:
    """The compiled --proto: its descriptor pool, file and the class of --message."""

    def __init__(self, args, workdir):
        if not os.path.isfile(args.proto):
            raise UsageError(f"--proto: no such file {args.proto}")
        # Absolute paths throughout: protoc maps a file to its import name by a textual prefix.
        self.include_dirs = [os.path.abspath(d) for d in args.proto_path or [os.path.dirname(args.proto) or "."]]
        for d in self.include_dirs:
            if not os.path.isdir(d):
                raise UsageError(f"--proto-path: no such directory {d}")
        fds = run_protoc(os.path.abspath(args.proto), self.include_dirs, workdir)
        self.pool = descriptor_pool.DescriptorPool()
        for f in fds.file:
            self.pool.Add(f)
        self.file_proto = fds.file[-1]
        try:
            self.desc = self.pool.FindMessageTypeByName(args.message)
        except KeyError:
            names = sorted(all_message_names(self.file_proto))
            raise UsageError(f"--message {args.message!r} is not a message of {args.proto} "
                             f"(it has: {', '.join(names) or 'none'})") from None
        self.cls = message_factory.GetMessageClass(self.desc)

    def find_file(self, name):
        """The path on disk of an import named `name` (as protoc resolved it)."""
        for d in self.include_dirs:
            p = os.path.join(d, name)
            if os.path.isfile(p):
                return p
        raise UsageError(f"import {name!r} not found under {', '.join(self.include_dirs)}")


def all_message_names(file_proto):
    prefix = file_proto.package + "." if file_proto.package else ""
    out = []

    def walk(msgs, path):
        for m in msgs:
            out.append(path + m.name)
            walk(m.nested_type, path + m.name + ".")

    walk(file_proto.message_type, prefix)
    return out


def index_array(desc):
    """Confluent's message-index list of a message descriptor: its position among the top-level
    messages of its file, then among the nested messages of each enclosing message."""
    path = []
    while desc.containing_type is not None:
        parent = desc.containing_type
        path.append(list(parent.nested_types).index(desc))
        desc = parent
    path.append(list(desc.file.message_types_by_name.values()).index(desc))
    return list(reversed(path))


def message_at(file_proto, indexes):
    """Full name of the message the index list names in a FileDescriptorProto, or None."""
    if not indexes:
        indexes = [0]
    msgs = file_proto.message_type
    name = file_proto.package
    for i in indexes:
        if i < 0 or i >= len(msgs):
            return None
        name = f"{name}.{msgs[i].name}" if name else msgs[i].name
        msgs = msgs[i].nested_type
    return name


# ---------------------------------------------------------------------------------------------
# Registered schemas: base64 FileDescriptorProto or .proto text


def schema_form(text):
    """("descriptor", FileDescriptorProto) if `text` is the base64 of one, else ("text", None)."""
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return "text", None
    fdp = descriptor_pb2.FileDescriptorProto()
    try:
        fdp.ParseFromString(raw)
    except Exception:  # DecodeError
        return "text", None
    if not fdp.name and not fdp.message_type and not fdp.syntax:
        return "text", None
    return "descriptor", fdp


def file_proto_of(registry, schema, workdir, what):
    """The FileDescriptorProto of a registered schema; a text schema is compiled with protoc,
    its references fetched from the registry (text ones as files, descriptor ones as a
    descriptor set)."""
    form, fdp = schema_form(schema.schema_str or "")
    if form == "descriptor":
        return form, fdp
    d = tempfile.mkdtemp(prefix="schema-", dir=workdir)
    deps = descriptor_pb2.FileDescriptorSet()
    seen = set()

    def fetch_refs(s):
        for ref in s.references or []:
            if ref.name in seen:
                continue
            seen.add(ref.name)
            try:
                registered = registry.get_version(ref.subject, ref.version)
            except SchemaRegistryError as e:
                raise Failure(f"{what}: reference {ref.name} ({ref.subject} version {ref.version}): "
                              f"{registry_error(e)}") from None
            fetch_refs(registered.schema)
            rform, rfdp = schema_form(registered.schema.schema_str or "")
            if rform == "descriptor":
                rfdp.name = ref.name
                deps.file.append(rfdp)
            else:
                path = os.path.join(d, ref.name)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(registered.schema.schema_str)

    fetch_refs(schema)
    main = os.path.join(d, "registered.proto" if "registered.proto" not in seen else f"{uuid.uuid4().hex}.proto")
    with open(main, "w", encoding="utf-8") as f:
        f.write(schema.schema_str or "")
    set_in = None
    if deps.file:
        set_in = os.path.join(d, "references.pb")
        with open(set_in, "wb") as f:
            f.write(deps.SerializeToString())
    try:
        fds = run_protoc(main, [d], workdir, set_in)
    except UsageError as e:
        raise Failure(f"{what}: the registered schema is neither a base64 FileDescriptorProto "
                      f"nor .proto text protoc accepts: {e}") from None
    return form, fds.file[-1]


# ---------------------------------------------------------------------------------------------
# JSON


def to_json(msg):
    """The documented JSON form of a decoded message."""
    obj = json_format.MessageToDict(msg, always_print_fields_with_no_presence=True,
                                    preserving_proto_field_name=True)
    return fix_int64(obj, msg.DESCRIPTOR)


def fix_int64(obj, desc):
    """Turns the quoted 64-bit integers of Protobuf's JSON mapping into numbers, by the schema."""
    if not isinstance(obj, dict):
        return obj
    for name, value in obj.items():
        field = desc.fields_by_name.get(name)
        if field is None:  # "@type" of Any and the like
            continue
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            sub = field.message_type
            if sub.GetOptions().map_entry:
                vf = sub.fields_by_name["value"]
                obj[name] = {k: fix_value(v, vf) for k, v in value.items()}
            elif field.is_repeated:
                obj[name] = [fix_value(v, field) for v in value]
            else:
                obj[name] = fix_value(value, field)
        elif field.type in INT64_TYPES:
            obj[name] = [to_int(v) for v in value] if isinstance(value, list) else to_int(value)
    return obj


def fix_value(value, field):
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        name = field.message_type.full_name
        if name in INT64_WRAPPERS:
            return to_int(value)
        if name.startswith("google.protobuf."):  # Timestamp, Struct, Any...: their own JSON forms
            return value
        return fix_int64(value, field.message_type)
    if field.type in INT64_TYPES:
        return to_int(value)
    return value


def to_int(v):
    return int(v) if isinstance(v, str) and re.fullmatch(r"-?\d+", v) else v


# ---------------------------------------------------------------------------------------------
# produce


def register_text(registry, proto, name, registered):
    """Registers (under their file names) the .proto texts of the imports of the file `name`,
    recursively; returns that file's references. `registered`: import name -> SchemaReference."""
    fd = proto.pool.FindFileByName(name)
    refs = []
    for dep in fd.dependencies:
        if dep.name.startswith(BUILTIN_IMPORTS):
            continue
        if dep.name not in registered:
            dep_refs = register_text(registry, proto, dep.name, registered)
            with open(proto.find_file(dep.name), encoding="utf-8") as f:
                schema = Schema(f.read(), "PROTOBUF", dep_refs)
            try:
                registry.register_schema(dep.name, schema)
                version = registry.lookup_schema(dep.name, schema).version
            except SchemaRegistryError as e:
                raise Failure(f"the registry refused {dep.name} (subject {dep.name}): {registry_error(e)}") from None
            registered[dep.name] = SchemaReference(dep.name, dep.name, version)
        refs.append(registered[dep.name])
    return refs


def text_serializer(registry, proto, args):
    """A ProtobufSerializer whose framing carries the id of the .proto text registered here."""
    try:
        with open(args.proto, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise UsageError(f"--proto: {e}") from None
    refs = register_text(registry, proto, proto.file_proto.name, {})
    subject = produce_subject(args)
    try:
        schema_id = registry.register_schema(subject, Schema(text, "PROTOBUF", refs))
    except SchemaRegistryError as e:
        raise Failure(f"the registry refused the schema for subject {subject}: {registry_error(e)}") from None
    indexes = index_array(proto.desc)

    def framing(payload, ctx, _unused):
        return SchemaId("PROTOBUF", schema_id, None, indexes).id_to_bytes() + payload

    # No auto-registration and no SerializationContext: the serializer only frames the message.
    ser = ProtobufSerializer(proto.cls, registry, dict(SUBJECT_STRATEGY, **{
        "auto.register.schemas": False, "schema.id.serializer": framing}))
    return lambda value, ctx: ser(value, None)


def produce_subject(args):
    return args.subject or f"{args.topic}-value"


def cmd_produce(args, workdir):
    proto = Proto(args, workdir)

    def convert(obj):
        if obj is None:
            return None
        if not isinstance(obj, dict):
            raise UsageError("a record is a JSON object (or null)")
        try:
            return json_format.ParseDict(obj, proto.cls())
        except json_format.ParseError as e:
            raise UsageError(f"does not fit {args.message}: {e}") from None

    records = read_records(args.records, args.key_field, convert)

    conf = kafka_conf(args, PROG)
    if args.plain:  # the message's bytes alone, as producers without a registry write them
        return send_records(args, conf, records, lambda value: None if value is None else value.SerializeToString(),
                            "(none: --plain)", "cannot serialize")
    registry = registry_client(args.registry)
    if args.register_as == "text":
        serializer = text_serializer(registry, proto, args)
    else:
        strategy = SUBJECT_STRATEGY
        if args.subject:  # a callable strategy names the subject outright
            strategy = {"subject.name.strategy": lambda ctx, record_name: args.subject}
        serializer = ProtobufSerializer(proto.cls, registry, dict(strategy, **{"auto.register.schemas": True}))
    ctx = SerializationContext(args.topic, MessageField.VALUE)
    return send_records(args, conf, records, lambda value: None if value is None else serializer(value, ctx),
                        produce_subject(args), "cannot serialize")


# ---------------------------------------------------------------------------------------------
# consume


def read_varint(raw, pos, where):
    value = shift = 0
    while True:
        if pos >= len(raw):
            raise Failure(f"{where}: the message-index list runs past the end of the value")
        b = raw[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return (value >> 1) ^ -(value & 1), pos  # zigzag
        if shift > 63:
            raise Failure(f"{where}: a varint of the message-index list is too long")


def read_indexes(raw, where):
    """The message-index list after the 5-byte header ([] is the 0x00 shortcut for [0])."""
    count, pos = read_varint(raw, 5, where)
    if count < 0:
        raise Failure(f"{where}: negative message-index count {count}")
    out = []
    for _ in range(count):
        v, pos = read_varint(raw, pos, where)
        out.append(v)
    return out or [0]


def cmd_consume(args, workdir):
    if args.count < 0:
        raise UsageError("--count must not be negative")
    proto = Proto(args, workdir)
    conf = kafka_conf(args, PROG)
    if args.plain:
        def decode_plain(raw, where):
            try:
                return to_json(proto.cls.FromString(raw))
            except Exception as e:
                raise Failure(f"{where}: cannot decode as {args.message}: {type(e).__name__}: {e}") from None

        return print_records(args, conf, "protobuf-client", decode_plain)
    registry = registry_client(args.registry)
    deserializer = ProtobufDeserializer(proto.cls, SUBJECT_STRATEGY)
    ctx = SerializationContext(args.topic, MessageField.VALUE)
    writer_files = {}

    def decode(raw, where):
        schema_id = framed_schema_id(raw, where, 6)  # header and at least one index byte
        indexes = read_indexes(raw, where)
        if schema_id not in writer_files:
            try:
                schema = registry.get_schema(schema_id)
            except SchemaRegistryError as e:
                raise Failure(f"{where}: schema id {schema_id}: {registry_error(e)}") from None
            writer_files[schema_id] = file_proto_of(registry, schema, workdir,
                                                    f"{where}: schema id {schema_id}")[1]
        writer = message_at(writer_files[schema_id], indexes)
        if writer != args.message:
            raise Failure(f"{where}: message index {indexes} names "
                          f"{writer or 'no message'} in schema id {schema_id}, not {args.message}")
        try:
            value = deserializer(raw, ctx)
        except Exception as e:
            raise Failure(f"{where}: cannot decode as {args.message} (schema id {schema_id}): "
                          f"{type(e).__name__}: {e}") from None
        return to_json(value)

    return print_records(args, conf, "protobuf-client", decode)


# ---------------------------------------------------------------------------------------------
# schema


def cmd_schema(args, workdir):
    registry = registry_client(args.registry)
    out = {}
    try:
        if args.id is not None:
            schema = registry.get_schema(args.id)
            out["id"] = args.id
        else:
            version = "latest" if args.version is None else args.version
            registered = registry.get_version(args.subject, version)
            schema = registered.schema
            out.update({"id": registered.schema_id, "subject": registered.subject,
                        "version": registered.version})
    except SchemaRegistryError as e:
        what = f"schema id {args.id}" if args.id is not None else f"subject {args.subject}"
        raise Failure(f"{what}: {registry_error(e)}") from None
    out.update({"schema": schema.schema_str, "schemaType": schema.schema_type,
                "references": [{"name": r.name, "subject": r.subject, "version": r.version}
                               for r in schema.references or []]})
    if args.decode:
        form, fdp = file_proto_of(registry, schema, workdir, f"schema id {out['id']}")
        out["form"] = form
        out["file"] = json_format.MessageToDict(fdp, preserving_proto_field_name=True)
    print(json.dumps(out, sort_keys=True, ensure_ascii=False))
    return 0


# ---------------------------------------------------------------------------------------------


def main(argv):
    parser, sub = command_parser(PROG, "Protobuf (Confluent wire format) producer and consumer "
                                 "using confluent_kafka's serializers and a schema registry.")

    def common(p):
        add_topic_args(p, registry_required=False)
        p.add_argument("--plain", action="store_true",
                       help="no registry: values are the message's bytes alone, without Confluent's framing")
        p.add_argument("--proto", required=True, metavar="FILE.proto")
        p.add_argument("--message", required=True, metavar="NAME",
                       help="full name of the message, e.g. pkg.Order or pkg.Order.Line")
        p.add_argument("--proto-path", action="append", metavar="DIR",
                       help="import directory (repeatable; default the directory of --proto)")
        add_security_args(p)

    p = add_produce_parser(sub, common)
    add_records_args(p)
    p.add_argument("--subject", help="register the schema under this subject (default <topic>-value), as "
                   "producers using RecordNameStrategy or TopicRecordNameStrategy do")
    p.add_argument("--register-as", choices=["descriptor", "text"], default="descriptor",
                   help="register the schema as ProtobufSerializer does (base64 FileDescriptorProto, "
                        "default) or as the .proto text")
    add_delivery_timeout(p)
    add_consume_parser(sub, common)
    p = sub.add_parser("schema", help="print a registered schema as JSON")
    add_registry_arg(p)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--id", type=int, help="schema id")
    which.add_argument("--subject", help="subject, e.g. <topic>-value")
    p.add_argument("--version", type=int, help="with --subject: this version (default the latest)")
    p.add_argument("--decode", action="store_true",
                   help="also print the schema's FileDescriptorProto as JSON (\"file\") and its form")

    def parse_and_run():
        args = parser.parse_args(argv)
        if args.command == "schema" and args.version is not None and args.subject is None:
            raise UsageError("--version needs --subject")
        if args.command != "schema" and (args.registry is None) != args.plain:
            raise UsageError("give --registry, or --plain for messages without a registry (not both)")
        with tempfile.TemporaryDirectory(prefix="protobuf-client-") as workdir:
            command = {"produce": cmd_produce, "consume": cmd_consume, "schema": cmd_schema}[args.command]
            return command(args, workdir)

    return run(PROG, parse_and_run, registry_failures=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
