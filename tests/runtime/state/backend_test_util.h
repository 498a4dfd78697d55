#pragma once
// Helpers for the tests run against both keyed state backends: building a backend of a kind,
// an in-memory snapshot sink/source that checks sizes and checksums like the checkpoint storage.

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "flow/runtime/state/keyed_state_backend.h"

namespace flow::rt::test {

inline std::string TestTmpDir() {
  const char* t = std::getenv("TMPDIR");
  return t != nullptr && *t != '\0' ? t : "/tmp";
}

inline std::unique_ptr<KeyedStateBackend> MakeBackend(
    StateBackendKind kind, KeyGroupSpan range, size_t cache_entries = 64,
    ProcessingClock clock = nullptr, uint32_t max_parallelism = kDefaultMaxParallelism) {
  StateBackendOptions o;
  o.kind = kind;
  o.local_dir = TestTmpDir();
  o.cache_entries = cache_entries;
  o.write_buffer_bytes = 1u << 20;
  auto b = KeyedStateBackend::Make(range, max_parallelism, std::move(clock), o);
  EXPECT_TRUE(b.ok()) << b.status().ToString();
  return std::move(b).value();
}

// Files in memory. Read checks size and CRC-32C the way the checkpoint storage does.
class MemoryFiles final : public SnapshotFileSink, public SnapshotFileSource {
 public:
  Result<StoredFile> WriteOwn(std::string_view name, std::string_view bytes) override {
    return Put(std::string(name), bytes, false);
  }
  Result<StoredFile> WriteShared(std::string_view name, std::string_view bytes) override {
    ++shared_writes;
    return Put("shared/" + std::string(name), bytes, true);
  }
  bool HasShared(std::string_view name) override {
    std::lock_guard lock(mu_);
    return files_.contains("shared/" + std::string(name));
  }
  Result<std::string> Read(const StoredFile& f) override {
    std::lock_guard lock(mu_);
    auto it = files_.find(f.shared ? "shared/" + f.name : f.name);
    if (it == files_.end()) return Status::NotFound(f.name + ": missing file");
    if (verify && (it->second.size() != f.size || Crc32c(it->second) != f.crc32c)) {
      return Status::Corruption(f.name + ": checksum mismatch");
    }
    return it->second;
  }
  std::string* Bytes(const std::string& key) {
    std::lock_guard lock(mu_);
    return &files_[key];
  }
  std::atomic<int> shared_writes{0};
  bool verify = true;

 private:
  Result<StoredFile> Put(const std::string& key, std::string_view bytes, bool shared) {
    std::lock_guard lock(mu_);
    files_[key] = std::string(bytes);
    StoredFile f;
    f.name = shared ? key.substr(7) : key;
    f.size = bytes.size();
    f.crc32c = Crc32c(bytes);
    f.shared = shared;
    return f;
  }
  std::mutex mu_;
  std::map<std::string, std::string> files_;
};

// The synchronous and asynchronous parts in one go; the first file is the snapshot's own.
inline std::vector<StoredFile> SnapshotNow(KeyedStateBackend* b, int64_t id,
                                           const std::string& name, SnapshotFileSink* sink) {
  auto pending = b->SnapshotAsync(id, name);
  EXPECT_TRUE(pending.ok()) << pending.status().ToString();
  if (!pending.ok()) return {};
  auto files = (*pending)->Write(sink);
  EXPECT_TRUE(files.ok()) << files.status().ToString();
  return files.ok() ? *files : std::vector<StoredFile>{};
}

inline const char* KindName(const ::testing::TestParamInfo<StateBackendKind>& info) {
  return StateBackendKindName(info.param);
}

}  // namespace flow::rt::test
