#include "kafka_start_offsets.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "flow/runtime/checkpoint/checkpoint_storage.h"

namespace flow::rt {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kMagic = "flow-kafka-start 1";

std::string PathOf(const std::string& dir, const std::string& topic) {
  return dir + "/kafka-start-" + topic;
}

}  // namespace

Result<std::optional<std::map<int32_t, int64_t>>> ReadKafkaStartOffsets(const std::string& dir,
                                                                        const std::string& topic) {
  const std::string path = PathOf(dir, topic);
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    if (ec)
      return Status::IoError(
          fmt::format("kafka source: cannot check `{}`: {}", path, ec.message()));
    return std::optional<std::map<int32_t, int64_t>>();
  }
  std::ifstream in(path);
  if (!in) return Status::IoError(fmt::format("kafka source: cannot read `{}`", path));
  auto corrupt = [&](std::string_view what) {
    return Status::Corruption(fmt::format(
        "kafka source: start offsets file `{}` is damaged ({}); delete it to resolve `start` again",
        path, what));
  };
  std::string line;
  if (!std::getline(in, line) || line != kMagic) return corrupt("bad first line");
  if (!std::getline(in, line) || line != "topic " + topic)
    return corrupt("topic line does not name `" + topic + "`");
  std::map<int32_t, int64_t> offsets;
  bool ended = false;
  while (std::getline(in, line)) {
    if (line == "end") {
      ended = true;
      break;
    }
    std::istringstream fields(line);
    int64_t partition = -1, offset = -1;
    std::string rest;
    if (!(fields >> partition >> offset) || (fields >> rest) || partition < 0 ||
        partition > INT32_MAX || offset < 0) {
      return corrupt("bad line `" + line + "`");
    }
    offsets[static_cast<int32_t>(partition)] = offset;
  }
  if (!ended) return corrupt("no `end` line");
  return std::optional<std::map<int32_t, int64_t>>(std::move(offsets));
}

Result<std::map<int32_t, int64_t>> RecordKafkaStartOffsets(
    const std::string& dir, const std::string& topic, const std::map<int32_t, int64_t>& offsets) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return Status::IoError(fmt::format("kafka source: cannot create `{}`: {}", dir, ec.message()));
  const std::string path = PathOf(dir, topic);
  // A name per process and call, so concurrent subtasks never write the same temporary file.
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = fmt::format("{}.tmp-{}-{}", path, ::getpid(), counter.fetch_add(1));
  std::string text = fmt::format("{}\ntopic {}\n", kMagic, topic);
  for (const auto& [p, off] : offsets) text += fmt::format("{} {}\n", p, off);
  text += "end\n";
  Status synced = checkpoint_fs::WriteFileDurably(tmp, text);
  if (!synced.ok()) {
    fs::remove(tmp, ec);
    return Status::IoError("kafka source: " + synced.message());
  }
  // link() never replaces an existing name: exactly one subtask's resolution becomes the record.
  const int rc = ::link(tmp.c_str(), path.c_str());
  const int saved = errno;
  fs::remove(tmp, ec);
  if (rc != 0 && saved != EEXIST) {
    return Status::IoError(fmt::format("kafka source: cannot record start offsets in `{}`: {}",
                                       path, std::strerror(saved)));
  }
  if (rc == 0) {
    Status dir_synced = checkpoint_fs::SyncDir(dir);
    if (!dir_synced.ok()) return Status::IoError("kafka source: " + dir_synced.message());
    return offsets;
  }
  Result<std::optional<std::map<int32_t, int64_t>>> winner = ReadKafkaStartOffsets(dir, topic);
  if (!winner.ok()) return winner.status();
  if (!winner->has_value())
    return Status::Internal(fmt::format("kafka source: `{}` vanished", path));
  return std::move(**winner);
}

}  // namespace flow::rt
