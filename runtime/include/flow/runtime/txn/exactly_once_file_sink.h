#pragma once
// ExactlyOnceFileSink: a TwoPhaseCommitSink writing lines ("<payload>\n") into a directory, one
// series of part files per subtask. A file goes through three names (n = part number, N =
// checkpoint id; hidden names start with '.', and readers of the directory must ignore
// dot-files):
//   .<prefix>-<subtask>-<n><suffix>.inprogress    being written (current epoch)
//   .<prefix>-<subtask>-<n><suffix>.pending-<N>   closed and fsynced at PreCommit(N)
//   <prefix>-<subtask>-<n><suffix>                committed: atomic rename at Commit(M >= N)
// So a reader never sees a partial or uncommitted file; a visible file never changes again.
//
// Recover(R): for every subtask s' this instance owns after a rescale (s' % parallelism ==
// subtask), renames each `.pending-<K>` with K <= R to its final name (a rename already done
// is fine), deletes `.pending-<K>` with K > R and every `.inprogress` file (orphans of epochs
// after R), and continues part numbers after the highest number in the directory.
// Fault points (checkpoint/fault_injection.h): `after-precommit` at the end of PreCommit,
// `during-commit` after the first rename of a Commit, `after-commit-before-cleanup` after the
// renames, before the pending list is updated.
// Errors: kIoError naming the path; kInvalidArgument for bad options; kInternal for calls out
// of order. Threading: one instance per subtask, one thread at a time; subtasks touch distinct
// files (except Recover after a rescale, which the engine runs before any subtask writes).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "flow/runtime/txn/two_phase_commit_sink.h"

namespace flow::rt {

struct ExactlyOnceFileSinkOptions {
  // Output directory; created (with parents) when missing. Required.
  std::string directory{};
  // Default: "part".
  std::string prefix = "part";
  // Default: ".jsonl".
  std::string suffix = ".jsonl";
  // A part file is closed before it would exceed this many bytes (it becomes visible at the
  // next commit). Default: 128 MiB.
  uint64_t roll_bytes = uint64_t{128} << 20;
  // Buffered bytes that trigger a write(2). Default: 1 MiB.
  size_t buffer_bytes = size_t{1} << 20;
};

class ExactlyOnceFileSink final : public TwoPhaseCommitSink {
 public:
  explicit ExactlyOnceFileSink(ExactlyOnceFileSinkOptions options) : options_(std::move(options)) {}
  // Closes an open file descriptor; leaves every file where it is (a crash does the same).
  ~ExactlyOnceFileSink() override;

  Status Open(uint32_t subtask, uint32_t parallelism) override;
  Status Recover(int64_t restored_checkpoint_id) override;
  Status BeginTransaction() override;
  Status Write(std::string_view key, std::string_view payload, TimestampMs timestamp) override;
  Status PreCommit(int64_t checkpoint_id) override;
  Status Commit(int64_t checkpoint_id) override;
  Status Abort(int64_t checkpoint_id) override;
  Status Close() override;
  bool CommitIsResumable() const override { return true; }

  // Final (visible) file names of part files pending per checkpoint id (for tests and logs).
  const std::map<int64_t, std::vector<std::string>>& pending() const { return pending_; }

 private:
  std::string FinalName(uint32_t subtask, uint64_t part) const;
  std::string Path(const std::string& name) const { return options_.directory + "/" + name; }
  Status StartPart();
  Status FinishPart();
  Status WriteBuffer();
  Status CommitFile(const std::string& final_name, int64_t checkpoint_id);

  ExactlyOnceFileSinkOptions options_;
  uint32_t subtask_ = 0;
  uint32_t parallelism_ = 1;
  bool opened_ = false;
  bool recovered_ = false;
  bool in_transaction_ = false;
  bool aborted_ = false;
  uint64_t next_part_ = 0;
  int64_t last_precommit_ = 0;
  int fd_ = -1;
  std::string current_final_;  // final name of the file being written
  uint64_t file_bytes_ = 0;
  std::string buf_;
  std::vector<std::string> epoch_files_;  // closed in-progress files of the current epoch
  std::map<int64_t, std::vector<std::string>> pending_;  // checkpoint id -> final names
};

}  // namespace flow::rt
