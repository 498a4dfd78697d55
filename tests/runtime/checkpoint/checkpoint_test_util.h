#pragma once
// Helpers for the checkpoint tests: a temporary directory and a way to write a complete
// checkpoint through CheckpointStorage the way tasks and the coordinator would.

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "flow/runtime/checkpoint/checkpoint_storage.h"

namespace flow::rt::test {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "flow-ckpt-XXXXXX").string();
    char* p = ::mkdtemp(tmpl.data());
    EXPECT_NE(p, nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

inline JobCheckpointInfo TestJob(uint64_t fingerprint = 0xF00D, uint32_t max_parallelism = 128) {
  JobCheckpointInfo j;
  j.fingerprint = fingerprint;
  j.max_parallelism = max_parallelism;
  j.operators = {{"src", 1}, {"agg", 2}};
  return j;
}

// Writes checkpoint `id` of TestJob: one source position and two keyed "agg" subtasks whose files
// hold `payload` + subtask; `shared` names shared files that agg#0 references.
inline void WriteCheckpoint(CheckpointStorage* storage, int64_t id, const std::string& payload,
                            const std::vector<std::string>& shared = {}) {
  std::vector<TaskAck> acks;
  TaskAck src;
  src.checkpoint_id = id;
  src.task = 0;
  OperatorSnapshot s;
  s.operator_name = "src";
  s.source_position = "offset=" + std::to_string(id * 100);
  src.snapshots.push_back(s);
  acks.push_back(src);
  for (uint32_t sub = 0; sub < 2; ++sub) {
    TaskAck a;
    a.checkpoint_id = id;
    a.task = 1 + sub;
    OperatorSnapshot o;
    o.operator_name = "agg";
    o.subtask = sub;
    o.key_group_first = sub * 64;
    o.key_group_end = sub * 64 + 64;
    auto f =
        storage->WriteSnapshotFile(id, SnapshotFileName("agg", sub), payload + std::to_string(sub));
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    o.files.push_back(*f);
    if (sub == 0) {
      for (const std::string& name : shared) {
        auto sf = storage->WriteSharedFile(name, "content of " + name);
        ASSERT_TRUE(sf.ok()) << sf.status().ToString();
        o.files.push_back(*sf);
      }
    }
    a.snapshots.push_back(o);
    acks.push_back(a);
  }
  Status st = storage->Finalize(id, acks);
  ASSERT_TRUE(st.ok()) << st.ToString();
}

inline std::unique_ptr<CheckpointStorage> OpenStorage(const std::string& dir, uint32_t retained = 3,
                                                      JobCheckpointInfo job = TestJob()) {
  CheckpointStorageOptions o;
  o.state_dir = dir;
  o.retained = retained;
  o.wall_clock = [] { return int64_t{1700000000000}; };
  auto s = CheckpointStorage::Open(o, job);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(*s) : nullptr;
}

}  // namespace flow::rt::test
