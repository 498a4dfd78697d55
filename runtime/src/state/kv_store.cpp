#include "flow/runtime/state/kv_store.h"

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace flow::rt {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void Fatal(const std::string& dir, const char* what, const rocksdb::Status& s) {
  // The pointer-returning state API has no error channel; losing a write silently would break
  // exactly-once, so the process stops and the job restarts from its last checkpoint.
  std::fprintf(stderr, "flow: rocksdb state backend (%s): %s failed: %s\n", dir.c_str(), what,
               s.ToString().c_str());
  std::abort();
}

rocksdb::Slice S(std::string_view v) {
  return {v.data(), v.size()};
}
std::string_view V(const rocksdb::Slice& s) {
  return {s.data(), s.size()};
}

// The local database is scratch space: durability comes from the checkpoint files, which the
// checkpoint storage fsyncs. Skipping RocksDB's own syncs keeps the synchronous part of a snapshot
// (memtable flush + hard-link checkpoint, on the task thread) from waiting on the disk.
class NoSyncFile final : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  using FSWritableFileOwnerWrapper::FSWritableFileOwnerWrapper;
  rocksdb::IOStatus Sync(const rocksdb::IOOptions&, rocksdb::IODebugContext*) override {
    return rocksdb::IOStatus::OK();
  }
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions&, rocksdb::IODebugContext*) override {
    return rocksdb::IOStatus::OK();
  }
  rocksdb::IOStatus RangeSync(uint64_t, uint64_t, const rocksdb::IOOptions&,
                              rocksdb::IODebugContext*) override {
    return rocksdb::IOStatus::OK();
  }
};

class NoSyncDirectory final : public rocksdb::FSDirectoryWrapper {
 public:
  using FSDirectoryWrapper::FSDirectoryWrapper;
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions&, rocksdb::IODebugContext*) override {
    return rocksdb::IOStatus::OK();
  }
  rocksdb::IOStatus FsyncWithDirOptions(const rocksdb::IOOptions&, rocksdb::IODebugContext*,
                                        const rocksdb::DirFsyncOptions&) override {
    return rocksdb::IOStatus::OK();
  }
};

class NoSyncFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  explicit NoSyncFileSystem(const std::shared_ptr<rocksdb::FileSystem>& target)
      : FileSystemWrapper(target) {}
  static const char* kClassName() { return "FlowNoSyncFileSystem"; }
  const char* Name() const override { return kClassName(); }
  rocksdb::IOStatus NewWritableFile(const std::string& name, const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* result,
                                    rocksdb::IODebugContext* dbg) override {
    std::unique_ptr<rocksdb::FSWritableFile> file;
    rocksdb::IOStatus s = target()->NewWritableFile(name, options, &file, dbg);
    if (s.ok()) result->reset(new NoSyncFile(std::move(file)));
    return s;
  }
  rocksdb::IOStatus ReopenWritableFile(const std::string& name, const rocksdb::FileOptions& options,
                                       std::unique_ptr<rocksdb::FSWritableFile>* result,
                                       rocksdb::IODebugContext* dbg) override {
    std::unique_ptr<rocksdb::FSWritableFile> file;
    rocksdb::IOStatus s = target()->ReopenWritableFile(name, options, &file, dbg);
    if (s.ok()) result->reset(new NoSyncFile(std::move(file)));
    return s;
  }
  rocksdb::IOStatus NewDirectory(const std::string& name, const rocksdb::IOOptions& options,
                                 std::unique_ptr<rocksdb::FSDirectory>* result,
                                 rocksdb::IODebugContext* dbg) override {
    std::unique_ptr<rocksdb::FSDirectory> dir;
    rocksdb::IOStatus s = target()->NewDirectory(name, options, &dir, dbg);
    if (s.ok()) result->reset(new NoSyncDirectory(std::move(dir)));
    return s;
  }
};

rocksdb::Env* NoSyncEnv() {
  static const std::unique_ptr<rocksdb::Env> kEnv =
      rocksdb::NewCompositeEnv(std::make_shared<NoSyncFileSystem>(rocksdb::FileSystem::Default()));
  return kEnv.get();
}

rocksdb::Options DbOptions(const KvStoreOptions& o) {
  rocksdb::Options opt;
  opt.env = NoSyncEnv();
  opt.create_if_missing = true;
  opt.create_missing_column_families = true;
  opt.write_buffer_size = o.write_buffer_bytes;
  opt.max_background_jobs = 2;
  opt.info_log_level = rocksdb::InfoLogLevel::ERROR_LEVEL;
  opt.keep_log_file_num = 1;
  // Most cache misses ask the memtable for a key it does not have (a new key, or one evicted
  // long ago): a whole-key bloom filter on the memtable answers those without a skip-list search,
  // which was a third of q8's time.
  opt.memtable_prefix_bloom_size_ratio = 0.1;
  opt.memtable_whole_key_filtering = true;
  // Cache misses are point lookups, many of keys never seen: bloom filters answer those without
  // reading blocks. One block cache for every backend of the process.
  static const std::shared_ptr<rocksdb::Cache> kBlockCache = rocksdb::NewLRUCache(256u << 20);
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = kBlockCache;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  table.cache_index_and_filter_blocks = true;
  opt.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return opt;
}

}  // namespace

struct KvStore::Impl {
  KvStoreOptions options;
  rocksdb::DB* db = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> tables;
  std::vector<std::string> names;
  rocksdb::WriteBatch batch;
  rocksdb::WriteOptions write_options;

  ~Impl() {
    if (db != nullptr) {
      for (auto* h : tables) {
        rocksdb::Status s = db->DestroyColumnFamilyHandle(h);
        (void)s;  // closing anyway
      }
      rocksdb::Status s = db->Close();
      (void)s;  // the directory is deleted next
      delete db;
    }
    std::error_code ec;
    fs::remove_all(options.dir, ec);  // best effort: scratch space
  }
};

KvStore::KvStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KvStore::~KvStore() = default;

Result<std::unique_ptr<KvStore>> KvStore::Open(KvStoreOptions options) {
  std::error_code ec;
  fs::create_directories(options.dir, ec);
  if (ec)
    return Status::IoError("rocksdb state: cannot create '" + options.dir + "': " + ec.message());
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->write_options.disableWAL = true;
  rocksdb::Status s = rocksdb::DB::Open(DbOptions(options), options.dir, &impl->db);
  if (!s.ok()) {
    impl->db = nullptr;
    return Status::IoError("rocksdb state: cannot open a database in '" + options.dir +
                           "': " + s.ToString());
  }
  return std::unique_ptr<KvStore>(new KvStore(std::move(impl)));
}

const std::string& KvStore::dir() const {
  return impl_->options.dir;
}

Result<uint32_t> KvStore::Table(const std::string& name) {
  for (size_t i = 0; i < impl_->names.size(); ++i) {
    if (impl_->names[i] == name) return static_cast<uint32_t>(i);
  }
  rocksdb::ColumnFamilyOptions cfo(DbOptions(impl_->options));
  rocksdb::ColumnFamilyHandle* h = nullptr;
  rocksdb::Status s = impl_->db->CreateColumnFamily(cfo, name, &h);
  if (!s.ok()) {
    return Status::IoError("rocksdb state: cannot create column family '" + name + "' in '" +
                           impl_->options.dir + "': " + s.ToString());
  }
  impl_->tables.push_back(h);
  impl_->names.push_back(name);
  return static_cast<uint32_t>(impl_->tables.size() - 1);
}

std::vector<std::string> KvStore::TableNames() const {
  return impl_->names;
}

bool KvStore::Get(uint32_t table, std::string_view key, std::string* value) {
  if (impl_->batch.Count() > 0) Commit();
  rocksdb::Status s = impl_->db->Get(rocksdb::ReadOptions(), impl_->tables[table], S(key), value);
  if (s.IsNotFound()) return false;
  if (!s.ok()) Fatal(impl_->options.dir, "get", s);
  return true;
}

void KvStore::Put(uint32_t table, std::string_view key, std::string_view value) {
  rocksdb::Status s = impl_->batch.Put(impl_->tables[table], S(key), S(value));
  if (!s.ok()) Fatal(impl_->options.dir, "batch put", s);
  if (impl_->batch.GetDataSize() > (4u << 20)) Commit();
}

void KvStore::Delete(uint32_t table, std::string_view key) {
  rocksdb::Status s = impl_->batch.Delete(impl_->tables[table], S(key));
  if (!s.ok()) Fatal(impl_->options.dir, "batch delete", s);
}

void KvStore::DeleteRange(uint32_t table, std::string_view begin, std::string_view end) {
  rocksdb::Status s = impl_->batch.DeleteRange(impl_->tables[table], S(begin), S(end));
  if (!s.ok()) Fatal(impl_->options.dir, "batch delete range", s);
}

void KvStore::Commit() {
  if (impl_->batch.Count() == 0) return;
  rocksdb::Status s = impl_->db->Write(impl_->write_options, &impl_->batch);
  if (!s.ok()) Fatal(impl_->options.dir, "write", s);
  impl_->batch.Clear();
}

void KvStore::Scan(uint32_t table, std::string_view begin, std::string_view end, const ScanFn& fn) {
  Commit();
  rocksdb::ReadOptions ro;
  rocksdb::Slice upper = S(end);
  ro.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> it(impl_->db->NewIterator(ro, impl_->tables[table]));
  for (it->Seek(S(begin)); it->Valid(); it->Next()) fn(V(it->key()), V(it->value()));
  if (!it->status().ok()) Fatal(impl_->options.dir, "scan", it->status());
}

size_t KvStore::Count(uint32_t table, std::string_view begin, std::string_view end) {
  size_t n = 0;
  Scan(table, begin, end, [&n](std::string_view, std::string_view) { ++n; });
  return n;
}

Result<std::vector<std::string>> KvStore::CheckpointTo(const std::string& dir) {
  Commit();
  rocksdb::Checkpoint* raw = nullptr;
  rocksdb::Status s = rocksdb::Checkpoint::Create(impl_->db, &raw);
  std::unique_ptr<rocksdb::Checkpoint> cp(raw);
  // log_size_for_flush = 0: always flush, so every key is in an SST file (the WAL is off).
  if (s.ok()) s = cp->CreateCheckpoint(dir, 0);
  if (!s.ok())
    return Status::IoError("rocksdb state: checkpoint into '" + dir + "' failed: " + s.ToString());
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    files.push_back(e.path().filename().string());
  if (ec) return Status::IoError("rocksdb state: cannot list '" + dir + "': " + ec.message());
  return files;
}

Status KvStore::ImportRange(const std::string& checkpoint_dir, uint32_t kg_first, uint32_t kg_end,
                            const std::vector<std::string>& tables) {
  rocksdb::Options opt = DbOptions(impl_->options);
  opt.create_if_missing = false;
  opt.create_missing_column_families = false;
  std::vector<std::string> cf_names;
  rocksdb::Status s = rocksdb::DB::ListColumnFamilies(opt, checkpoint_dir, &cf_names);
  if (!s.ok()) {
    return Status::Corruption("rocksdb state snapshot in '" + checkpoint_dir +
                              "' is not a readable database: " + s.ToString());
  }
  std::vector<rocksdb::ColumnFamilyDescriptor> descs;
  for (const std::string& n : cf_names) descs.emplace_back(n, rocksdb::ColumnFamilyOptions(opt));
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  s = rocksdb::DB::OpenForReadOnly(opt, checkpoint_dir, descs, &handles, &raw);
  if (!s.ok()) {
    return Status::Corruption("rocksdb state snapshot in '" + checkpoint_dir +
                              "' does not open: " + s.ToString());
  }
  std::unique_ptr<rocksdb::DB> src(raw);
  std::string begin, end;
  AppendKeyGroupPrefix(&begin, kg_first);
  AppendKeyGroupPrefix(&end, kg_end);
  Status result;
  for (size_t i = 0; i < cf_names.size() && result.ok(); ++i) {
    bool wanted = false;
    for (const std::string& t : tables) wanted = wanted || t == cf_names[i];
    if (!wanted) continue;
    auto id = Table(cf_names[i]);
    if (!id.ok()) {
      result = id.status();
      break;
    }
    rocksdb::ReadOptions ro;
    rocksdb::Slice upper = S(end);
    // kg_end may be 65536 in principle; ranges here stay below 2^15 (max parallelism).
    ro.iterate_upper_bound = &upper;
    ro.verify_checksums = true;
    std::unique_ptr<rocksdb::Iterator> it(src->NewIterator(ro, handles[i]));
    for (it->Seek(S(begin)); it->Valid(); it->Next()) Put(*id, V(it->key()), V(it->value()));
    if (!it->status().ok()) {
      result = Status::Corruption("rocksdb state snapshot in '" + checkpoint_dir + "', state '" +
                                  cf_names[i] + "': " + it->status().ToString());
    }
  }
  Commit();
  for (auto* h : handles) {
    rocksdb::Status ds = src->DestroyColumnFamilyHandle(h);
    (void)ds;  // read-only instance, closed next
  }
  return result;
}

}  // namespace flow::rt
