#pragma once
// CheckpointStore: where checkpoints live, as an object store sees it: named objects ("chk-7/
// window-0.snap", "shared/run1-12.sst"), written whole, read whole, listed one level at a time,
// deleted. Nothing else: no rename, no directories of their own, no appends, no locks. The
// checkpoint protocol (CheckpointStorage, recovery, state adoption between instances) is written
// against this and nothing else, so an object store can hold the checkpoints of a job whose
// instances run on several machines by implementing these few calls; a shared directory (one
// machine, or a network file system every instance mounts) is the implementation today.
//
// What the protocol needs of an implementation:
//  - Put is durable when it returns, and a reader that sees the object afterwards sees all of it
//    (kAtomic); kVerified objects may instead be seen torn after a crash mid-Put, because their
//    readers check the size and CRC-32C that `_metadata` records.
//  - A checkpoint is complete when its `_metadata` object exists: Get and List after a Put
//    returned see the object (read-after-write and list-after-write consistency, which S3, GCS and
//    Azure Blob give today).
//  - Names whose Put returned survive a crash once Flush of their prefix returned (a directory
//    fsync for files; nothing to do for an object store).
//
// Keys are relative, '/'-separated, made of [A-Za-z0-9_.-] parts not starting with '.'.
// Threading: every call may be made from any thread concurrently, for distinct keys.
// Errors: IoError naming the location and what failed; NotFound for a missing object.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "flow/runtime/common/status.h"

namespace flow::rt {

enum class PutMode {
  kAtomic,    // seen whole or not at all, also after a crash during the Put
  kVerified,  // a crash during the Put may leave it torn: every reader checks size and checksum
};

// One level under a prefix: the names of its objects and of the prefixes below it ("chk-7"),
// both relative to the prefix, sorted.
struct StoreListing {
  std::vector<std::string> objects;
  std::vector<std::string> prefixes;
};

class CheckpointStore {
 public:
  virtual ~CheckpointStore() = default;

  // "/data/flow/state" or "s3://bucket/job": for messages and logs.
  virtual const std::string& location() const = 0;
  // location() + "/" + key.
  std::string Describe(std::string_view key) const;

  // Writes `key` whole (replacing it); durable when it returns. kVerified writes fire the
  // during-snapshot-write fault point halfway (fault_injection.h).
  [[nodiscard]] virtual Status Put(std::string_view key, std::string_view bytes, PutMode mode) = 0;
  // NotFound when `key` does not exist.
  virtual Result<std::string> Get(std::string_view key) = 0;
  // Size in bytes; NotFound when `key` does not exist.
  virtual Result<uint64_t> Size(std::string_view key) = 0;
  // One level under `prefix` ("" is the top, otherwise a key prefix without the trailing '/');
  // a prefix nothing was written under lists empty.
  virtual Result<StoreListing> List(std::string_view prefix) = 0;
  // Makes the names of the objects Put under `prefix` durable (see above).
  [[nodiscard]] virtual Status Flush(std::string_view prefix) = 0;
  // Deletes one object; a missing one is not an error.
  [[nodiscard]] virtual Status Delete(std::string_view key) = 0;
  // Deletes every object under `prefix` + "/"; nothing there is not an error.
  [[nodiscard]] virtual Status DeleteAll(std::string_view prefix) = 0;
};

// The store at `location`. Today a directory path (created if missing and `create`; otherwise a
// missing one lists empty); a location with a scheme ("s3://…") is refused with InvalidArgument
// naming what works instead.
Result<std::shared_ptr<CheckpointStore>> OpenCheckpointStore(const std::string& location,
                                                             bool create = true);

// Ok when OpenCheckpointStore can open `location`; the refusal otherwise (for flag checks, before
// anything is created).
[[nodiscard]] Status CheckCheckpointLocation(const std::string& location);

// Splits "<location>/<name>" (a checkpoint or savepoint named on the command line) into the store
// at <location> and <name>. InvalidArgument when there is no parent to open.
struct StoreEntry {
  std::shared_ptr<CheckpointStore> store;
  std::string name;
};
Result<StoreEntry> OpenStoreEntry(const std::string& path);

}  // namespace flow::rt
