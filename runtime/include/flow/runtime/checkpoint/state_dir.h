#pragma once
// What a state directory knows about its job, beside the checkpoints (docs/checkpoints.md, "The
// state directory's own records"):
//
//   <state-dir>/_lock        flock()ed exclusively while a job process uses the directory; holds
//                            that process's pid (for the message a second instance gets)
//   <state-dir>/_job         the job id the directory belongs to, written at its first start
//   <state-dir>/_committed   the newest checkpoint whose output the job's exactly-once sinks have
//                            committed (written after each commit)
//
// Why: two processes on one directory would delete each other's checkpoints; a binary that is
// renamed or redeployed under another job id must not be taken for a new job (its Kafka progress
// would look empty and the old checkpoints be discarded); and a sink whose committed output is
// visible must never be restored to an older checkpoint (its epochs would be written again).
//
// Threading: Open and Claim from one thread; committed() and RecordCommitted are thread-safe.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "flow/runtime/common/status.h"

namespace flow::rt {

class StateDirectory {
 public:
  // Creates `dir` if missing and takes its lock without waiting. kFenced when another process
  // holds it ("... in use by another running instance (pid N) ..."; the job exits 3); IoError
  // naming the path otherwise; Corruption when a record does not parse.
  [[nodiscard]] static Result<std::unique_ptr<StateDirectory>> Open(const std::string& dir);
  ~StateDirectory();  // releases the lock
  StateDirectory(const StateDirectory&) = delete;
  StateDirectory& operator=(const StateDirectory&) = delete;

  const std::string& path() const { return dir_; }
  // The job id recorded at the directory's first start; "" when none is (an older directory).
  const std::string& recorded_job_id() const { return job_id_; }
  // Binds the directory to `job_id` (recorded when none is yet). InvalidArgument when it belongs
  // to another job: nothing is deleted, the message says how to go on. An empty id claims nothing.
  [[nodiscard]] Status Claim(const std::string& job_id);
  // True when Claim found complete checkpoints but no job id record: they were written by a
  // version that did not record ids, under an id that is not known (it defaulted to the binary's
  // file name), so they may belong to another id. Such a claim is recorded only by ConfirmClaim,
  // once the start-up checks accepted it.
  bool claimed_unrecorded_checkpoints() const { return claimed_unrecorded_checkpoints_; }
  // Records a claim Claim left pending (above); a no-op otherwise.
  [[nodiscard]] Status ConfirmClaim();

  // The newest checkpoint the sinks committed; 0 when none is recorded.
  int64_t committed() const;
  // Records `id` durably (atomic replace) when it is newer than the recorded one.
  [[nodiscard]] Status RecordCommitted(int64_t id);

 private:
  StateDirectory(std::string dir, int lock_fd) : dir_(std::move(dir)), lock_fd_(lock_fd) {}

  std::string dir_;
  int lock_fd_ = -1;
  std::string job_id_;
  bool claimed_unrecorded_checkpoints_ = false;
  bool claim_pending_ = false;  // job_id_ is claimed but not written to `_job` yet
  mutable std::mutex mu_;
  int64_t committed_ = 0;  // guarded by mu_
};

}  // namespace flow::rt
