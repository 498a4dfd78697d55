#pragma once
// Per-subtask decoders for DecodingSource (decoding_source.h), one per source format. Each wraps
// a generated per-schema function and owns the parser state that function needs:
//
//   json: Status fn(JsonDecoder&, std::string_view payload, T*)
//   csv:  Status fn(CsvDecoder&, T*)            after the decoder parsed the record
//   raw:  Status fn(const RawRecord&, T*)
//   avro: Status fn(AvroIn&, const AvroResolved&, T*)   the body of a Confluent-framed record,
//         resolved from the writer's schema (formats/avro_registry.h) to the script's
//   protobuf: Status fn(ProtoIn&, const ProtoMessage&, T*)   likewise, after the message
//         indexes (formats/protobuf_registry.h)
//
// CSV columns: `names` are all schema fields in order (field i = column i without a header; with
// a header, found by name in each file's line 1); fn reads only the fields the job uses.
// Threading: one decoder per subtask.

#include <span>
#include <string_view>
#include <utility>

#include "flow/runtime/connectors/connector.h"
#include "flow/runtime/formats/avro.h"
#include "flow/runtime/formats/avro_registry.h"
#include "flow/runtime/formats/csv_decoder.h"
#include "flow/runtime/formats/json_codecs.h"
#include "flow/runtime/formats/json_decoder.h"
#include "flow/runtime/formats/protobuf.h"
#include "flow/runtime/formats/protobuf_registry.h"

namespace flow::exec {

template <typename T, typename Fn>
class JsonRecordDecoder {
 public:
  explicit JsonRecordDecoder(Fn fn) : fn_(std::move(fn)) {}
  rt::Result<bool> operator()(const rt::RawRecord& record, T* out) {
    FLOW_RETURN_IF_ERROR(fn_(decoder_, record.payload, out));
    return true;
  }

 private:
  Fn fn_;
  rt::JsonDecoder decoder_;
};

struct CsvFormat {
  bool header = false;   // Default: false (columns by position)
  char delimiter = ',';  // Default: ','
};

// The delimiter argument of `format csv(delimiter: ...)`: exactly one byte that is not a quote,
// CR or LF. kInvalidArgument otherwise.
[[nodiscard]] rt::Result<char> CsvDelimiter(std::string_view text);

template <typename T, typename Fn>
class CsvRecordDecoder {
 public:
  CsvRecordDecoder(Fn fn, CsvFormat format, std::span<const std::string_view> names,
                   std::span<const bool> required)
      : fn_(std::move(fn)), header_(format.header), decoder_(format.delimiter) {
    if (header_) {
      decoder_.UseHeaderRows(names, required);
    } else {
      decoder_.BindPositions(names);
    }
  }
  rt::Result<bool> operator()(const rt::RawRecord& record, T* out) {
    if (header_) {
      auto is_header = decoder_.ConsumeHeader(record.payload, record.offset);
      if (!is_header.ok()) return is_header.status();
      if (*is_header) return false;
    }
    FLOW_RETURN_IF_ERROR(decoder_.Parse(record.payload, record.offset));
    FLOW_RETURN_IF_ERROR(fn_(decoder_, out));
    return true;
  }

 private:
  Fn fn_;
  bool header_;
  rt::CsvDecoder decoder_;
};

template <typename T, typename Fn>
class RawRecordDecoder {
 public:
  explicit RawRecordDecoder(Fn fn) : fn_(std::move(fn)) {}
  rt::Result<bool> operator()(const rt::RawRecord& record, T* out) {
    FLOW_RETURN_IF_ERROR(fn_(record, out));
    return true;
  }

 private:
  Fn fn_;
};

template <typename T, typename Fn>
class AvroRecordDecoder {
 public:
  AvroRecordDecoder(Fn fn, std::shared_ptr<rt::AvroReader> reader)
      : fn_(std::move(fn)), reader_(std::move(reader)) {}
  rt::Result<bool> operator()(const rt::RawRecord& record, T* out) {
    int32_t id;
    std::string_view body;
    FLOW_RETURN_IF_ERROR(rt::ConfluentAvroFrame(record.payload, &id, &body));
    if (last_ == nullptr || id != last_id_) {
      auto r = reader_->Resolution(id);
      if (!r.ok()) return r.status();
      last_ = std::move(*r);
      last_id_ = id;
    }
    rt::AvroIn in(body, last_->writer());
    FLOW_RETURN_IF_ERROR(fn_(in, last_->root(), out));
    if (in.remaining() != 0) [[unlikely]] {
      return rt::Status::InvalidArgument(std::to_string(in.remaining()) +
                                         " bytes left after the record (schema id " +
                                         std::to_string(id) + ")");
    }
    return true;
  }

 private:
  Fn fn_;
  std::shared_ptr<rt::AvroReader> reader_;
  std::shared_ptr<const rt::AvroResolution> last_;
  int32_t last_id_ = 0;
};

template <typename T, typename Fn>
class ProtobufRecordDecoder {
 public:
  ProtobufRecordDecoder(Fn fn, std::shared_ptr<rt::ProtobufReader> reader)
      : fn_(std::move(fn)), reader_(std::move(reader)) {}
  rt::Result<bool> operator()(const rt::RawRecord& record, T* out) {
    int32_t id;
    std::string_view body;
    FLOW_RETURN_IF_ERROR(rt::ConfluentFrame(record.payload, "Protobuf", &id, &body));
    FLOW_RETURN_IF_ERROR(rt::ConfluentMessageIndexes(&body, &path_));
    if (last_ == nullptr || id != last_id_ || path_ != last_path_) {
      auto r = reader_->Resolution(id, path_);
      if (!r.ok()) return r.status();
      last_ = std::move(*r);
      last_id_ = id;
      last_path_ = path_;
    }
    rt::ProtoIn in(body);
    FLOW_RETURN_IF_ERROR(fn_(in, last_->root(), out));
    return true;
  }

 private:
  Fn fn_;
  std::shared_ptr<rt::ProtobufReader> reader_;
  std::shared_ptr<const rt::ProtoResolution> last_;
  int32_t last_id_ = 0;
  std::vector<int32_t> path_, last_path_;
};

// Plain Protobuf messages of one .proto message (no registry, no framing).
template <typename T, typename Fn>
class ProtobufPlainDecoder {
 public:
  ProtobufPlainDecoder(Fn fn, std::shared_ptr<const rt::ProtoResolution> resolution)
      : fn_(std::move(fn)), resolution_(std::move(resolution)) {}
  rt::Result<bool> operator()(const rt::RawRecord& record, T* out) {
    rt::ProtoIn in(record.payload);
    FLOW_RETURN_IF_ERROR(fn_(in, resolution_->root(), out));
    return true;
  }

 private:
  Fn fn_;
  std::shared_ptr<const rt::ProtoResolution> resolution_;
};

// Kafka metadata in records (`metadata:` on a kafka source): after the payload's decoder,
// `fill(const RawRecord&, T*)` sets the fields the message's key, timestamp, partition, offset and
// headers fill (generated; source_emitter.cpp).
template <typename T, typename Inner, typename Fill>
class MetadataDecoder {
 public:
  MetadataDecoder(Inner inner, Fill fill) : inner_(std::move(inner)), fill_(std::move(fill)) {}
  rt::Result<bool> operator()(const rt::RawRecord& record, T* out) {
    rt::Result<bool> r = inner_(record, out);
    if (!r.ok() || !*r) return r;
    FLOW_RETURN_IF_ERROR(fill_(record, out));
    return true;
  }

 private:
  Inner inner_;
  Fill fill_;
};

// A key or header value as a field: `utf8` for string fields (kInvalidArgument naming `what`
// when it is not UTF-8), any bytes for bytes fields.
[[nodiscard]] rt::Status MetadataBytes(std::string_view value, bool utf8, std::string_view what,
                                       std::string* out);
// kInvalidArgument: "the message has no <what>, and field `f` is not nullable".
[[nodiscard]] rt::Status MissingMetadata(std::string_view what, std::string_view field);

}  // namespace flow::exec
