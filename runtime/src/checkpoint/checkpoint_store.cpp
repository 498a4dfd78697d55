// The directory implementation of CheckpointStore: an object is a file under the root, a prefix a
// directory. Atomic puts go through a temporary name and a rename; verified ones are written in
// place (one fsync, no rename), which is what keeps a checkpoint's many snapshot files cheap.

#include "flow/runtime/checkpoint/checkpoint_store.h"

#include <algorithm>
#include <filesystem>

#include "checkpoint_fs_internal.h"
#include "flow/runtime/checkpoint/checkpoint_storage.h"

namespace flow::rt {
namespace {

namespace fs = std::filesystem;

// Keys are made by the runtime, but a name from a flag or a corrupt metadata file must not reach
// outside the root.
bool ValidKey(std::string_view key) {
  if (key.empty()) return false;
  size_t start = 0;
  while (start <= key.size()) {
    size_t end = key.find('/', start);
    if (end == std::string_view::npos) end = key.size();
    std::string_view part = key.substr(start, end - start);
    if (part.empty() || part[0] == '.') return false;
    start = end + 1;
  }
  return true;
}

Status BadKey(std::string_view key) {
  return Status::InvalidArgument("invalid checkpoint object name '" + std::string(key) + "'");
}

class LocalDirStore final : public CheckpointStore {
 public:
  explicit LocalDirStore(std::string root) : root_(std::move(root)) {}

  const std::string& location() const override { return root_; }

  Status Put(std::string_view key, std::string_view bytes, PutMode mode) override {
    if (!ValidKey(key)) return BadKey(key);
    const fs::path path = PathOf(key);
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (ec) {
      return Status::IoError("cannot create directory '" + path.parent_path().string() +
                             "': " + ec.message());
    }
    if (mode == PutMode::kAtomic) return checkpoint_fs::WriteFileAtomically(path.string(), bytes);
    return checkpoint_fs::WriteFileDurably(path.string(), bytes, /*snapshot_fault_point=*/true);
  }

  Result<std::string> Get(std::string_view key) override {
    if (!ValidKey(key)) return BadKey(key);
    return checkpoint_fs::ReadFile(PathOf(key).string());
  }

  Result<uint64_t> Size(std::string_view key) override {
    if (!ValidKey(key)) return BadKey(key);
    const fs::path path = PathOf(key);
    std::error_code ec;
    const uintmax_t size = fs::file_size(path, ec);
    if (ec == std::errc::no_such_file_or_directory)
      return Status::NotFound("missing file '" + path.string() + "'");
    if (ec) return Status::IoError("cannot stat '" + path.string() + "': " + ec.message());
    return static_cast<uint64_t>(size);
  }

  Result<StoreListing> List(std::string_view prefix) override {
    if (!prefix.empty() && !ValidKey(prefix)) return BadKey(prefix);
    const fs::path dir = prefix.empty() ? fs::path(root_) : PathOf(prefix);
    StoreListing out;
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    if (ec == std::errc::no_such_file_or_directory) return out;
    for (fs::directory_iterator end; !ec && it != end; it.increment(ec)) {
      std::string name = it->path().filename().string();
      // A temporary of an atomic put in flight (or abandoned by a crash) is no object.
      if (name.empty() || name[0] == '.' || name.ends_with(".tmp")) continue;
      std::error_code type_ec;
      if (it->is_directory(type_ec)) {
        out.prefixes.push_back(std::move(name));
      } else {
        out.objects.push_back(std::move(name));
      }
    }
    if (ec) return Status::IoError("cannot list '" + dir.string() + "': " + ec.message());
    std::sort(out.objects.begin(), out.objects.end());
    std::sort(out.prefixes.begin(), out.prefixes.end());
    return out;
  }

  Status Flush(std::string_view prefix) override {
    if (!prefix.empty() && !ValidKey(prefix)) return BadKey(prefix);
    const fs::path dir = prefix.empty() ? fs::path(root_) : PathOf(prefix);
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return Status::Ok();  // nothing was put there
    return checkpoint_fs::SyncDir(dir.string());
  }

  Status Delete(std::string_view key) override {
    if (!ValidKey(key)) return BadKey(key);
    std::error_code ec;
    fs::remove(PathOf(key), ec);
    if (ec) return Status::IoError("cannot delete '" + PathOf(key).string() + "': " + ec.message());
    return Status::Ok();
  }

  Status DeleteAll(std::string_view prefix) override {
    if (!ValidKey(prefix)) return BadKey(prefix);
    std::error_code ec;
    fs::remove_all(PathOf(prefix), ec);
    if (ec)
      return Status::IoError("cannot delete '" + PathOf(prefix).string() + "': " + ec.message());
    return Status::Ok();
  }

 private:
  fs::path PathOf(std::string_view key) const { return fs::path(root_) / std::string(key); }

  std::string root_;
};

Status RefuseScheme(const std::string& location) {
  return Status::InvalidArgument(
      "checkpoint location '" + location +
      "': this build stores checkpoints in a directory only; give a path (for instances on "
      "several machines, a network file system every instance mounts, docs/deploy.md)");
}

bool HasScheme(const std::string& location) {
  const size_t colon = location.find("://");
  return colon != std::string::npos && colon > 0 &&
         location.find('/') == colon + 1;  // "s3://x", not "dir/a://b"
}

}  // namespace

std::string CheckpointStore::Describe(std::string_view key) const {
  return (fs::path(location()) / std::string(key)).string();
}

Result<std::shared_ptr<CheckpointStore>> OpenCheckpointStore(const std::string& location,
                                                             bool create) {
  if (location.empty()) return Status::InvalidArgument("checkpoint location: empty path");
  if (HasScheme(location)) return RefuseScheme(location);
  std::error_code ec;
  if (create) fs::create_directories(location, ec);
  if (ec) return Status::IoError("cannot create '" + location + "': " + ec.message());
  return std::shared_ptr<CheckpointStore>(std::make_shared<LocalDirStore>(location));
}

Status CheckCheckpointLocation(const std::string& location) {
  return HasScheme(location) ? RefuseScheme(location) : Status::Ok();
}

Result<StoreEntry> OpenStoreEntry(const std::string& path) {
  if (HasScheme(path)) return RefuseScheme(path);
  fs::path p = fs::path(path).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();  // "x/chk-3/" -> "x/chk-3"
  const std::string name = p.filename().string();
  if (name.empty() || name == "." || name == "..")
    return Status::InvalidArgument("'" + path + "' names no checkpoint or savepoint directory");
  const fs::path parent = p.has_parent_path() ? p.parent_path() : fs::path(".");
  // Not created: a restore names something that must exist already.
  return StoreEntry{std::make_shared<LocalDirStore>(parent.string()), name};
}

}  // namespace flow::rt
