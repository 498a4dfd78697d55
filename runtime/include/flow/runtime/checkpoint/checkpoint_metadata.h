#pragma once
// The metadata of one checkpoint or savepoint: what it contains and how to verify it. Written
// LAST, atomically, as `_metadata` in the checkpoint directory; a directory without it is an
// incomplete checkpoint. Format (little-endian, common/serde.h), docs/checkpoints.md:
//
//   u32 magic "FLCM"  u32 version=3  u64 file_size (so truncation is reported as such)
//   body: i64 checkpoint_id  string savepoint_name  i64 created_ms  u64 job_fingerprint
//         u32 max_parallelism  bool state_schemas (v3)
//         u32 n_ops   n_ops x { string operator  u32 parallelism
//                               u32 n_parts  n_parts x string state schema part (v3) }
//         u32 n_snap  n_snap x { string operator  u32 subtask  u32 kg_first  u32 kg_end
//                                bool finished  string source_position
//                                u32 n_files  n_files x { string name  u64 size  u32 crc32c  bool
//                                shared } }
//   u32 crc32c(magic .. end of body)
//
// Decoding never trusts its input: truncation, a bad magic/version/checksum and counts larger
// than the bytes left are Corruption errors saying what is wrong.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "flow/runtime/checkpoint/checkpoint_types.h"
#include "flow/runtime/common/status.h"

namespace flow::rt {

inline constexpr std::string_view kMetadataFileName = "_metadata";

struct OperatorParallelism {
  std::string name;
  uint32_t parallelism = 1;
  // What its state's bytes depend on (checkpoint/state_schema.h); empty for a stateless one.
  std::vector<std::string> state_schema = {};
  bool operator==(const OperatorParallelism&) const = default;
};

// What identifies the job a checkpoint belongs to and the shape it was taken at.
struct JobCheckpointInfo {
  uint64_t fingerprint = 0;  // JobFingerprint(...) of the job graph
  uint32_t max_parallelism = 128;
  std::vector<OperatorParallelism> operators;
  // The compiler declared every stateful operator's state schema (Job::SetStateSchema): a
  // restore maps state by operator name (MapRestoredState) instead of requiring the same graph.
  bool state_schemas = false;
  // --allow-dropped-state: state of removed operators, and state that cannot be carried over
  // into a changed operator, is dropped (that operator starts empty) instead of refused.
  bool allow_dropped_state = false;
};

struct CheckpointMetadata {
  int64_t checkpoint_id = 0;
  std::string savepoint_name;  // empty for a checkpoint
  int64_t created_ms = 0;      // wall clock, informational
  uint64_t job_fingerprint = 0;
  uint32_t max_parallelism = 128;
  bool state_schemas = false;  // operators[].state_schema is what the job declared (v3)
  std::vector<OperatorParallelism> operators;
  std::vector<OperatorSnapshot> snapshots;
};

std::string EncodeCheckpointMetadata(const CheckpointMetadata& m);
Result<CheckpointMetadata> DecodeCheckpointMetadata(std::string_view bytes);

// A stable fingerprint of a job graph from its parts (operator names and kinds, edges, key
// names — but not the parallelism, so a rescaled job is still the same job).
uint64_t JobFingerprint(const std::vector<std::string>& parts);

}  // namespace flow::rt
