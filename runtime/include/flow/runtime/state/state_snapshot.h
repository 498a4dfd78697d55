#pragma once
// Asynchronous, incremental keyed-state snapshots.
//
// KeyedStateBackend::SnapshotAsync runs the cheap synchronous part at the barrier and returns a
// PendingSnapshot; its Write(sink) does the file work and may run on another thread (e.g. an
// AsyncSnapshotWriter) while the subtask keeps processing. Write returns every file the snapshot
// consists of; the first is the snapshot's own file, which KeyedStateBackend::RestoreFrom takes.
//
//   heap:    sync = the FLKS bytes of the whole state (a serialized copy); async = write them.
//   rocksdb: sync = write the cache back, flush, RocksDB checkpoint (hard links) into a local
//            directory, serialize the heap-resident timers; async = checksum every file, write
//            the SST files not already stored as shared files (incremental), write the FLKR file
//            listing them, delete the local checkpoint directory.
//
// Sinks and sources are interfaces so the state layer does not depend on the checkpoint
// storage; state/checkpoint_storage_sink.h adapts CheckpointStorage.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "flow/runtime/common/status.h"

namespace flow::rt {

// One stored file of a snapshot (mirrors the checkpoint layer's SnapshotFile).
struct StoredFile {
  std::string name;
  uint64_t size = 0;
  uint32_t crc32c = 0;
  bool shared = false;  // stored once, referenced by several snapshots
  bool operator==(const StoredFile&) const = default;
};

// Where the asynchronous part writes. Called from the writer thread only.
class SnapshotFileSink {
 public:
  virtual ~SnapshotFileSink() = default;
  // A file private to this snapshot.
  virtual Result<StoredFile> WriteOwn(std::string_view name, std::string_view bytes) = 0;
  // A file later snapshots may reference again; `name` is unique per content.
  virtual Result<StoredFile> WriteShared(std::string_view name, std::string_view bytes) = 0;
  // True when shared file `name` is still stored (it need not be written again).
  virtual bool HasShared(std::string_view name) = 0;
};

// Where a restore reads from.
class SnapshotFileSource {
 public:
  virtual ~SnapshotFileSource() = default;
  // The bytes of `file`; Corruption naming the file when its size or CRC-32C does not match,
  // NotFound / IoError when it cannot be read.
  virtual Result<std::string> Read(const StoredFile& file) = 0;
};

class PendingSnapshot {
 public:
  virtual ~PendingSnapshot() = default;
  // The asynchronous part. Call once, from any one thread. The backend must outlive it.
  virtual Result<std::vector<StoredFile>> Write(SnapshotFileSink* sink) = 0;
};

// A background thread running the asynchronous parts in submission order. The destructor
// finishes the queued work first.
class AsyncSnapshotWriter {
 public:
  using Done = std::function<void(Result<std::vector<StoredFile>>)>;

  AsyncSnapshotWriter();
  ~AsyncSnapshotWriter();
  AsyncSnapshotWriter(const AsyncSnapshotWriter&) = delete;
  AsyncSnapshotWriter& operator=(const AsyncSnapshotWriter&) = delete;

  // done(result) runs on the writer thread after Write; an error names why (the caller fails
  // that checkpoint with it).
  void Submit(std::unique_ptr<PendingSnapshot> snapshot, SnapshotFileSink* sink, Done done);
  // Blocks until every submitted snapshot is written.
  void Drain();
  size_t pending() const;

 private:
  struct Job {
    std::unique_ptr<PendingSnapshot> snapshot;
    SnapshotFileSink* sink;
    Done done;
  };
  void Loop();

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  size_t running_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace flow::rt
