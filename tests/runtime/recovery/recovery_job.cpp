// A stateful job for crash-recovery tests: a generator of keyed events (restorable position)
// -> KeyBy -> a keyed running count that snapshots its map -> a sink appending "key,count" lines
// to a file, flushed at every barrier and at the end (at-least-once output).
//
//   recovery_job --set out=FILE [--set records=N --set keys=K --set pause_every=M] <engine flags>
//
// The generator sleeps 1 ms every `pause_every` records of a subtask so checkpoints and kills
// land in the middle of the run.

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

#include "flow/runtime/common/key_group.h"
#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/main.h"

namespace {

using flow::rt::Batch;
using flow::rt::BinaryReader;
using flow::rt::BinaryWriter;
using flow::rt::Output;
using flow::rt::Status;

struct Event {
  int64_t key = 0;
};

struct Count {
  int64_t key = 0;
  int64_t count = 0;
};

uint64_t KeyHash(int64_t key) {
  return flow::rt::StableHash(key);
}

class RunningCount final : public flow::rt::OneInputOperator<Event, Count> {
 public:
  Status Open(flow::rt::OperatorContext& ctx) override {
    ctx_ = &ctx;
    return Status::Ok();
  }
  Status ProcessBatch(const Batch<Event>& batch, Output<Count>& out) override {
    for (size_t i = 0; i < batch.size(); ++i) {
      int64_t key = batch.records[i].key;
      out.Emit(Count{key, ++counts_[key]}, batch.timestamps[i]);
    }
    return Status::Ok();
  }
  Status SnapshotState(BinaryWriter* out) override {
    out->PutU64(counts_.size());
    for (const auto& [key, count] : counts_) {
      out->PutI64(key);
      out->PutI64(count);
    }
    return Status::Ok();
  }
  Status RestoreState(BinaryReader* in) override {
    uint64_t n = 0;
    FLOW_RETURN_IF_ERROR(in->GetU64(&n));
    for (uint64_t i = 0; i < n; ++i) {
      int64_t key = 0, count = 0;
      FLOW_RETURN_IF_ERROR(in->GetI64(&key));
      FLOW_RETURN_IF_ERROR(in->GetI64(&count));
      // Only the key groups this subtask owns (all of them at the checkpoint's parallelism).
      uint32_t group = flow::rt::KeyGroupForHash(KeyHash(key), ctx_->max_parallelism);
      if (ctx_->key_groups.Contains(group)) counts_[key] = count;
    }
    return Status::Ok();
  }

 private:
  flow::rt::OperatorContext* ctx_ = nullptr;
  std::unordered_map<int64_t, int64_t> counts_;
};

class AppendFileSink final : public flow::rt::SinkFunction<Count> {
 public:
  explicit AppendFileSink(std::string path) : path_(std::move(path)) {}
  Status Open(flow::rt::OperatorContext&) override {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    return fd_ < 0 ? Status::IoError("cannot open " + path_) : Status::Ok();
  }
  Status Write(const Batch<Count>& batch) override {
    for (const Count& c : batch.records) buffer_ += fmt::format("{},{}\n", c.key, c.count);
    return Status::Ok();
  }
  // One write() per flush: a SIGKILL cannot leave half a line behind.
  Status Flush() override {
    size_t done = 0;
    while (done < buffer_.size()) {
      ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
      if (n < 0) return Status::IoError("cannot write " + path_);
      done += static_cast<size_t>(n);
    }
    buffer_.clear();
    return Status::Ok();
  }
  void Close() override {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  std::string path_;
  int fd_ = -1;
  std::string buffer_;
};

}  // namespace

int main(int argc, char** argv) {
  using flow::rt::ParamType;
  return flow::rt::RunMain(
      argc, argv,
      {{"out", ParamType::kString, "", "file the sink appends to"},
       {"records", ParamType::kInt, "40000", "events generated"},
       {"keys", ParamType::kInt, "37", "distinct keys"},
       {"pause_every", ParamType::kInt, "100", "sleep 1 ms every this many events per subtask"}},
      [](flow::rt::Job& job) -> Status {
        auto out = job.params().GetString("out");
        auto records = job.params().GetInt("records");
        auto keys = job.params().GetInt("keys");
        auto pause_every = job.params().GetInt("pause_every");
        if (!out.ok() || out->empty()) return Status::InvalidArgument("--set out=FILE is required");
        if (!records.ok() || !keys.ok() || !pause_every.ok())
          return Status::InvalidArgument("bad parameter");
        const uint64_t n = static_cast<uint64_t>(*records), k = static_cast<uint64_t>(*keys);
        const uint64_t p = job.options().parallelism, pause = static_cast<uint64_t>(*pause_every);
        // Subtask s generates s, s+p, ...: (index / p) counts that subtask's events.
        auto gen = [n, k, p, pause](uint64_t index, Event* e) {
          if (index >= n) return false;
          if (pause > 0 && (index / p) % pause == 0)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          e->key = static_cast<int64_t>(index % k);
          return true;
        };
        std::string path = *out;
        job.Source<Event>("events", flow::rt::GeneratorSourceFactory<Event>(gen),
                          flow::rt::WatermarkSpec{.mode = flow::rt::TimeMode::kNone})
            .KeyBy("key", [](const Event& e) { return KeyHash(e.key); })
            .Then<Count>("count", [] { return std::make_unique<RunningCount>(); })
            .Sink(
                "out",
                [path](uint32_t, uint32_t) { return std::make_unique<AppendFileSink>(path); }, 1);
        return Status::Ok();
      });
}
