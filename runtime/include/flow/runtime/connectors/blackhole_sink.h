#pragma once
// BlackholeSink: discards every record, counting records and payload bytes (for benchmarks and
// tests). Never fails. Threading: one instance per subtask, used by one thread at a time.

#include <cstdint>

#include "flow/runtime/connectors/connector.h"

namespace flow::rt {

class BlackholeSink final : public RawSink {
 public:
  Status Open(uint32_t subtask, uint32_t parallelism) override { return Status::Ok(); }
  Status Write(std::string_view key, std::string_view payload, TimestampMs timestamp) override {
    ++records_;
    bytes_ += payload.size();
    return Status::Ok();
  }
  Status Flush() override { return Status::Ok(); }
  Status Close() override { return Status::Ok(); }

  uint64_t records() const { return records_; }
  uint64_t bytes() const { return bytes_; }

 private:
  uint64_t records_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace flow::rt
