#pragma once
// Typed sinks over the byte-level connectors (stdout, file, blackhole, kafka) for generated code.
// One generated function per sink encodes a record into its message key and payload:
//
//   void EncodeOut(const Out& r, SinkEncoders& e, std::string* key, std::string* payload);
//
// (with `metadata:` on a kafka sink, a fifth `rt::OutMeta*` for the message's timestamp and
// headers)
// using the subtask's encoders in `e` (JSON or CSV payload; `e.key` for a CSV-encoded key of
// several fields; `e.header` before an Avro payload). The key is used by sinks that have one
// (Kafka: it picks the partition with the Java client's murmur2 hash); an empty key means none.
//
// Delivery: at least once. The sink flushes at every checkpoint and at the end of input and waits
// for the connector's acknowledgements (Kafka: every record acked). Exactly-once sinks are
// transactional nodes of their own (AddExactlyOnceSink, engine/txn_sink.h), not made here.
// Errors: bad options are kInvalidArgument naming the connector and option, before the job starts.
// Threading: one encoder set per subtask.

#include <string>
#include <type_traits>
#include <utility>

#include "flow/runtime/connectors/connector_catalog.h"
#include "flow/runtime/engine/raw_adapters.h"
#include "flow/runtime/exec/io.h"
#include "flow/runtime/formats/avro.h"
#include "flow/runtime/formats/avro_registry.h"
#include "flow/runtime/formats/csv_encoder.h"
#include "flow/runtime/formats/json_codecs.h"
#include "flow/runtime/formats/json_encoder.h"
#include "flow/runtime/formats/protobuf.h"
#include "flow/runtime/formats/protobuf_registry.h"

namespace flow::exec {

// The guarantees are the connector catalog's (connectors/connector_catalog.h).

struct SinkEncoders {
  rt::JsonEncoder json;
  rt::CsvEncoder csv;
  rt::CsvEncoder key;
  bool initialized = false;  // for the generated code's one-time setup (a CSV delimiter)
  // Bytes before every payload, known when the job is built: Avro's magic byte and schema id.
  std::string header;
};

template <typename T, typename Fn>
class EncodeRecord {
 public:
  explicit EncodeRecord(Fn fn, std::string header = {}) : fn_(std::move(fn)) {
    encoders_.header = std::move(header);
  }
  void operator()(const T& record, std::string* key, std::string* payload) requires
      std::is_invocable_v<Fn&, const T&, SinkEncoders&, std::string*, std::string*> {
    fn_(record, encoders_, key, payload);
  }
  // A kafka sink with `metadata:` also sets the message's timestamp and headers.
  void operator()(const T& record, std::string* key, std::string* payload,
                  rt::OutMeta* meta) requires
      std::is_invocable_v<Fn&, const T&, SinkEncoders&, std::string*, std::string*, rt::OutMeta*> {
    fn_(record, encoders_, key, payload, meta);
  }

 private:
  Fn fn_;
  SinkEncoders encoders_;
};

template <typename T, typename Fn>
[[nodiscard]] rt::Result<rt::SinkFactory<T>> MakeSink(std::string kind,
                                                      rt::ConnectorOptions options, Fn encode,
                                                      std::string header = {}) {
  auto raw = RawSinkFactoryFor(std::move(kind), std::move(options));
  if (!raw.ok()) return raw.status();
  return rt::RawSinkAdapter<T>(std::move(*raw),
                               EncodeRecord<T, Fn>(std::move(encode), std::move(header)));
}

}  // namespace flow::exec
