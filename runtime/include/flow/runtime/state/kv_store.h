#pragma once
// KvStore: the RocksDB instance behind one `rocksdb` keyed state backend (one per operator
// subtask). One column family per named state; keys are [key group u16 big-endian][key bytes]
// (MapState: the whole map of a key is one value, see docs/windows-and-state.md), so every key
// group is one contiguous key range. RocksDB's own headers stay out of this header: the typed
// state classes include it on every access path.
//
// The database is local scratch: it lives in a fresh directory that the destructor deletes, the
// write-ahead log is off (durability comes from checkpoints, not from the local files).
//
// Errors: RocksDB failures on the access path (Get/Put/Scan) cannot be returned through the
// pointer-returning state API; they end the process with a message naming the directory and the
// RocksDB status (the job is then restarted from its last checkpoint). Checkpoint/import
// failures are returned as Status.
//
// Threading: one subtask thread, except CheckpointTo, which may overlap nothing else.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "flow/runtime/common/status.h"

namespace flow::rt {

struct KvStoreOptions {
  // Directory to create the database in; must not exist yet (or be empty).
  std::string dir;
  // RocksDB memtable size per column family. Default: 16 MiB.
  size_t write_buffer_bytes = 16u << 20;
};

// The key prefix of key group `kg`: two bytes, big-endian.
inline void AppendKeyGroupPrefix(std::string* out, uint32_t kg) {
  out->push_back(static_cast<char>((kg >> 8) & 0xff));
  out->push_back(static_cast<char>(kg & 0xff));
}

class KvStore {
 public:
  // IoError naming the directory when RocksDB cannot create the database.
  static Result<std::unique_ptr<KvStore>> Open(KvStoreOptions options);
  ~KvStore();  // closes and deletes the directory
  KvStore(const KvStore&) = delete;
  KvStore& operator=(const KvStore&) = delete;

  const std::string& dir() const;

  // The id of the column family `name`, created when missing.
  [[nodiscard]] Result<uint32_t> Table(const std::string& name);
  std::vector<std::string> TableNames() const;

  // Reads `key`; false when absent. Pending writes are committed first.
  bool Get(uint32_t table, std::string_view key, std::string* value);
  // Buffered in a write batch until Commit (or the next Get/Scan).
  void Put(uint32_t table, std::string_view key, std::string_view value);
  void Delete(uint32_t table, std::string_view key);
  void DeleteRange(uint32_t table, std::string_view begin, std::string_view end);
  void Commit();

  // fn(key, value) for every key in [begin, end), in key order, over a consistent view.
  using ScanFn = std::function<void(std::string_view key, std::string_view value)>;
  void Scan(uint32_t table, std::string_view begin, std::string_view end, const ScanFn& fn);
  // Keys in [begin, end) (a scan without values).
  size_t Count(uint32_t table, std::string_view begin, std::string_view end);

  // Flushes the memtables and creates a RocksDB checkpoint (hard links to the immutable SST
  // files, copies of the small MANIFEST/CURRENT/OPTIONS files) in `dir`, which must not exist.
  // Returns the names of the files in `dir`.
  Result<std::vector<std::string>> CheckpointTo(const std::string& dir);

  // Copies the keys of key groups [kg_first, kg_end) of every column family of the database in
  // `checkpoint_dir` (a checkpoint made by CheckpointTo) whose name is in `tables` into this
  // store. Corruption when the directory is not a readable database.
  [[nodiscard]] Status ImportRange(const std::string& checkpoint_dir, uint32_t kg_first,
                                   uint32_t kg_end, const std::vector<std::string>& tables);

 private:
  struct Impl;
  explicit KvStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace flow::rt
