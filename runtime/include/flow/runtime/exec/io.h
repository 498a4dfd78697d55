#pragma once
// Typed sources and sinks for generated code, built from a connector kind + options (the
// connector factory) and a generated per-record decode/encode function:
//
//   Status DecodeClick(JsonDecoder&, std::string_view payload, Click*);   // formats/json_decoder.h
//   void EncodeOut(const Out&, JsonEncoder*);                             // formats/json_encoder.h
//
// MakeJsonSource / MakeJsonSink validate the options at once (kInvalidArgument naming the
// connector and option, before the job starts) and give factories the engine calls per subtask.
// Each subtask gets its own decoder/encoder (they are not thread-safe).

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "flow/runtime/connectors/connector_factory.h"
#include "flow/runtime/engine/raw_adapters.h"
#include "flow/runtime/formats/csv_encoder.h"
#include "flow/runtime/formats/json_codecs.h"
#include "flow/runtime/formats/json_decoder.h"
#include "flow/runtime/formats/json_encoder.h"

namespace flow::exec {

// The text of a connector option value (script arguments are literals or params).
inline std::string OptionText(const std::string& v) { return v; }
inline std::string OptionText(bool v) { return v ? "true" : "false"; }
inline std::string OptionText(int64_t v) { return std::to_string(v); }
std::string OptionText(double v);

// Checks `kind`/`options` now and returns a factory that builds one RawSource per call.
[[nodiscard]] rt::Result<rt::RawSourceFactory> RawSourceFactoryFor(std::string kind, rt::ConnectorOptions options);
[[nodiscard]] rt::Result<rt::RawSinkFactory> RawSinkFactoryFor(std::string kind, rt::ConnectorOptions options);

// A decode function with its own decoder; copies start with a fresh decoder.
template <typename T, typename Decoder, typename Fn>
class DecodeWith {
 public:
  explicit DecodeWith(Fn fn) : fn_(std::move(fn)) {}
  DecodeWith(const DecodeWith& other) : fn_(other.fn_) {}
  DecodeWith& operator=(const DecodeWith&) = delete;
  rt::Status operator()(const rt::RawRecord& record, T* out) {
    if (!decoder_) decoder_ = std::make_unique<Decoder>();
    return fn_(*decoder_, record.payload, out);
  }

 private:
  Fn fn_;
  std::unique_ptr<Decoder> decoder_;
};

template <typename T, typename Fn>
class EncodeJsonWith {
 public:
  explicit EncodeJsonWith(Fn fn) : fn_(std::move(fn)) {}
  EncodeJsonWith(const EncodeJsonWith& other) : fn_(other.fn_) {}
  EncodeJsonWith& operator=(const EncodeJsonWith&) = delete;
  void operator()(const T& record, std::string* /*key*/, std::string* payload) {
    encoder_.Clear();
    fn_(record, &encoder_);
    payload->assign(encoder_.view());
  }

 private:
  Fn fn_;
  rt::JsonEncoder encoder_;
};

template <typename T, typename Fn>
[[nodiscard]] rt::Result<rt::SourceFactory<T>> MakeJsonSource(std::string kind, rt::ConnectorOptions options, Fn decode,
                                                               rt::DecodeErrorHandling errors = {}) {
  auto raw = RawSourceFactoryFor(std::move(kind), std::move(options));
  if (!raw.ok()) return raw.status();
  return rt::RawSourceAdapter<T>(std::move(*raw), DecodeWith<T, rt::JsonDecoder, Fn>(std::move(decode)),
                                 std::move(errors));
}

template <typename T, typename Fn>
[[nodiscard]] rt::Result<rt::SinkFactory<T>> MakeJsonSink(std::string kind, rt::ConnectorOptions options, Fn encode) {
  auto raw = RawSinkFactoryFor(std::move(kind), std::move(options));
  if (!raw.ok()) return raw.status();
  return rt::RawSinkAdapter<T>(std::move(*raw), EncodeJsonWith<T, Fn>(std::move(encode)));
}

// decode: Status(const RawRecord&, T*), needing no per-subtask state (raw format).
template <typename T, typename Decode>
[[nodiscard]] rt::Result<rt::SourceFactory<T>> MakeDecodedSource(std::string kind, rt::ConnectorOptions options,
                                                                 Decode decode, rt::DecodeErrorHandling errors = {}) {
  auto raw = RawSourceFactoryFor(std::move(kind), std::move(options));
  if (!raw.ok()) return raw.status();
  return rt::RawSourceAdapter<T>(std::move(*raw), std::move(decode), std::move(errors));
}

template <typename T, typename Fn>
class EncodeCsvWith {
 public:
  explicit EncodeCsvWith(Fn fn) : fn_(std::move(fn)) {}
  EncodeCsvWith(const EncodeCsvWith& other) : fn_(other.fn_) {}
  EncodeCsvWith& operator=(const EncodeCsvWith&) = delete;
  void operator()(const T& record, std::string* /*key*/, std::string* payload) {
    encoder_.Clear();
    fn_(record, &encoder_);
    payload->assign(encoder_.view());
  }

 private:
  Fn fn_;
  rt::CsvEncoder encoder_;
};

// encode: void(const T&, CsvEncoder*) writing the fields in order.
template <typename T, typename Fn>
[[nodiscard]] rt::Result<rt::SinkFactory<T>> MakeCsvSink(std::string kind, rt::ConnectorOptions options, Fn encode) {
  auto raw = RawSinkFactoryFor(std::move(kind), std::move(options));
  if (!raw.ok()) return raw.status();
  return rt::RawSinkAdapter<T>(std::move(*raw), EncodeCsvWith<T, Fn>(std::move(encode)));
}

// encode: void(const T&, std::string* key, std::string* payload) (raw format: the one field).
template <typename T, typename Encode>
[[nodiscard]] rt::Result<rt::SinkFactory<T>> MakeEncodedSink(std::string kind, rt::ConnectorOptions options, Encode encode) {
  auto raw = RawSinkFactoryFor(std::move(kind), std::move(options));
  if (!raw.ok()) return raw.status();
  return rt::RawSinkAdapter<T>(std::move(*raw), std::move(encode));
}

}  // namespace flow::exec
