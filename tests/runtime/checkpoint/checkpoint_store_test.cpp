// CheckpointStore: the contract both the directory store and an object-store-like double keep,
// and the whole checkpoint life (snapshots, shared files, finalisation, retention, restore
// selection, savepoints, discarding) run against the double, which has no files, no rename and
// no directories: what CheckpointStorage and recovery need of a store is the interface, nothing
// more.

#include "flow/runtime/checkpoint/checkpoint_store.h"

#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "checkpoint_test_util.h"
#include "flow/runtime/checkpoint/checkpoint_storage.h"
#include "flow/runtime/checkpoint/recovery.h"

namespace flow::rt {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

// A flat key → bytes map, as an object store is: a prefix exists only while objects are under it.
class MemoryStore final : public CheckpointStore {
 public:
  const std::string& location() const override { return location_; }
  Status Put(std::string_view key, std::string_view bytes, PutMode) override {
    std::lock_guard<std::mutex> lock(mu_);
    objects_[std::string(key)] = std::string(bytes);
    return Status::Ok();
  }
  Result<std::string> Get(std::string_view key) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = objects_.find(std::string(key));
    if (it == objects_.end()) return Status::NotFound("no object " + std::string(key));
    return it->second;
  }
  Result<uint64_t> Size(std::string_view key) override {
    auto v = Get(key);
    if (!v.ok()) return v.status();
    return static_cast<uint64_t>(v->size());
  }
  Result<StoreListing> List(std::string_view prefix) override {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string p = prefix.empty() ? "" : std::string(prefix) + "/";
    std::set<std::string> objects, prefixes;
    for (const auto& [key, bytes] : objects_) {
      if (key.compare(0, p.size(), p) != 0) continue;
      const std::string rest = key.substr(p.size());
      const size_t slash = rest.find('/');
      if (slash == std::string::npos) {
        objects.insert(rest);
      } else {
        prefixes.insert(rest.substr(0, slash));
      }
    }
    return StoreListing{{objects.begin(), objects.end()}, {prefixes.begin(), prefixes.end()}};
  }
  Status Flush(std::string_view) override { return Status::Ok(); }
  Status Delete(std::string_view key) override {
    std::lock_guard<std::mutex> lock(mu_);
    objects_.erase(std::string(key));
    return Status::Ok();
  }
  Status DeleteAll(std::string_view prefix) override {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string p = std::string(prefix) + "/";
    for (auto it = objects_.lower_bound(p); it != objects_.end() && it->first.rfind(p, 0) == 0;)
      it = objects_.erase(it);
    return Status::Ok();
  }

  std::set<std::string> Keys() {
    std::lock_guard<std::mutex> lock(mu_);
    std::set<std::string> out;
    for (const auto& [key, bytes] : objects_) out.insert(key);
    return out;
  }
  void Replace(const std::string& key, std::string bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    objects_[key] = std::move(bytes);
  }

 private:
  std::string location_ = "memory://test";
  std::mutex mu_;
  std::map<std::string, std::string> objects_;
};

// --- The contract, for both stores ---

class StoreContractTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam()) {
      auto s = OpenCheckpointStore(dir_.path() + "/store");
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      store_ = std::move(s).value();
    } else {
      store_ = std::make_shared<MemoryStore>();
    }
  }
  TempDir dir_;
  std::shared_ptr<CheckpointStore> store_;
};

TEST_P(StoreContractTest, PutGetSizeAndNotFound) {
  ASSERT_TRUE(store_->Put("chk-1/a.snap", "hello", PutMode::kVerified).ok());
  ASSERT_TRUE(store_->Put("chk-1/_metadata", "meta", PutMode::kAtomic).ok());
  EXPECT_EQ(*store_->Get("chk-1/a.snap"), "hello");
  EXPECT_EQ(*store_->Size("chk-1/_metadata"), 4u);
  ASSERT_TRUE(store_->Put("chk-1/a.snap", "replaced", PutMode::kAtomic).ok());
  EXPECT_EQ(*store_->Get("chk-1/a.snap"), "replaced");
  EXPECT_EQ(store_->Get("chk-1/b.snap").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->Size("chk-2/_metadata").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(store_->Flush("chk-1").ok());
  EXPECT_TRUE(store_->Flush("never-written").ok());
}

TEST_P(StoreContractTest, ListsOneLevelSorted) {
  for (const char* key :
       {"chk-10/b.snap", "chk-10/a.snap", "chk-9/_metadata", "shared/x", "sp-keep/_metadata"}) {
    ASSERT_TRUE(store_->Put(key, "v", PutMode::kAtomic).ok()) << key;
  }
  auto top = store_->List("");
  ASSERT_TRUE(top.ok()) << top.status().ToString();
  EXPECT_EQ(top->prefixes, (std::vector<std::string>{"chk-10", "chk-9", "shared", "sp-keep"}));
  auto chk = store_->List("chk-10");
  ASSERT_TRUE(chk.ok());
  EXPECT_EQ(chk->objects, (std::vector<std::string>{"a.snap", "b.snap"}));
  EXPECT_TRUE(chk->prefixes.empty());
  auto none = store_->List("chk-11");
  ASSERT_TRUE(none.ok()) << "a prefix nothing was written under lists empty";
  EXPECT_TRUE(none->objects.empty() && none->prefixes.empty());
}

TEST_P(StoreContractTest, DeletesOneObjectOrAPrefix) {
  for (const char* key : {"chk-1/a", "chk-1/b", "chk-12/a", "shared/x"}) {
    ASSERT_TRUE(store_->Put(key, "v", PutMode::kAtomic).ok());
  }
  EXPECT_TRUE(store_->Delete("shared/x").ok());
  EXPECT_TRUE(store_->Delete("shared/x").ok()) << "a missing object is no error";
  EXPECT_TRUE(store_->DeleteAll("chk-1").ok());
  EXPECT_TRUE(store_->DeleteAll("chk-1").ok());
  EXPECT_EQ(store_->Get("chk-1/a").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(*store_->Get("chk-12/a"), "v") << "chk-1 is no prefix of chk-12";
}

INSTANTIATE_TEST_SUITE_P(Stores, StoreContractTest, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Directory" : "Memory"; });

// --- The directory store ---

TEST(DirectoryStoreTest, RefusesNamesThatLeaveTheRoot) {
  TempDir dir;
  auto store = *OpenCheckpointStore(dir / "root");
  for (const char* key : {"../escape", "chk-1/../../x", ".hidden", "a//b", "", "/abs"}) {
    Status s = store->Put(key, "v", PutMode::kAtomic);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << key;
  }
  EXPECT_FALSE(fs::exists(dir / "escape"));
}

TEST(DirectoryStoreTest, AtomicPutsLeaveNoTemporaryObject) {
  TempDir dir;
  auto store = *OpenCheckpointStore(dir.path());
  ASSERT_TRUE(store->Put("shared/a", "x", PutMode::kAtomic).ok());
  test::WriteAll(dir / "shared/b.tmp", "a put a crash cut short");
  EXPECT_EQ(store->List("shared")->objects, std::vector<std::string>{"a"});
}

TEST(DirectoryStoreTest, AnUnknownSchemeIsRefusedWithWhatWorks) {
  auto s = OpenCheckpointStore("s3://bucket/job");
  ASSERT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("'s3://bucket/job'"), std::string::npos);
  EXPECT_NE(s.status().message().find("network file system"), std::string::npos);
  EXPECT_FALSE(fs::exists("s3:"));
}

TEST(DirectoryStoreTest, OpeningWithoutCreateLeavesNoDirectory) {
  TempDir dir;
  auto store = OpenCheckpointStore(dir / "missing", /*create=*/false);
  ASSERT_TRUE(store.ok());
  EXPECT_TRUE((*store)->List("")->prefixes.empty());
  EXPECT_FALSE(fs::exists(dir / "missing"));
}

TEST(DirectoryStoreTest, AnEntryIsItsParentStoreAndName) {
  auto e = OpenStoreEntry("/data/state/chk-3/");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->store->location(), "/data/state");
  EXPECT_EQ(e->name, "chk-3");
  auto rel = OpenStoreEntry("chk-4");
  ASSERT_TRUE(rel.ok());
  EXPECT_EQ(rel->store->location(), ".");
  EXPECT_EQ(OpenStoreEntry("/").status().code(), StatusCode::kInvalidArgument);
}

// --- Checkpoints in a store that has no files ---

class CheckpointsInAStoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<CheckpointStorage> Open(uint32_t retained) {
    CheckpointStorageOptions o;
    o.retained = retained;
    o.wall_clock = [] { return int64_t{1700000000000}; };
    o.store = store_;
    auto s = CheckpointStorage::Open(o, test::TestJob());
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(s).value() : nullptr;
  }
  std::shared_ptr<MemoryStore> store_ = std::make_shared<MemoryStore>();
};

TEST_F(CheckpointsInAStoreTest, RetentionKeepsTheNewestAndTheirSharedFiles) {
  auto storage = Open(2);
  ASSERT_NE(storage, nullptr);
  EXPECT_EQ(storage->state_dir(), "memory://test");
  test::WriteCheckpoint(storage.get(), 1, "one", {"sst-1"});
  test::WriteCheckpoint(storage.get(), 2, "two", {"sst-1", "sst-2"});
  test::WriteCheckpoint(storage.get(), 3, "three", {"sst-2", "sst-3"});
  // An abandoned partial checkpoint older than the newest complete one goes too.
  ASSERT_TRUE(storage->WriteSnapshotFile(0, "agg-0.snap", "partial").ok());
  test::WriteCheckpoint(storage.get(), 4, "four", {"sst-3"});
  const std::set<std::string> expected = {"chk-3/_metadata", "chk-3/agg-0.snap", "chk-3/agg-1.snap",
                                          "chk-4/_metadata", "chk-4/agg-0.snap", "chk-4/agg-1.snap",
                                          "shared/sst-2",    "shared/sst-3"};
  EXPECT_EQ(store_->Keys(), expected);
  EXPECT_TRUE(storage->HasSharedFile("sst-3"));
  EXPECT_FALSE(storage->HasSharedFile("sst-1"));
}

TEST_F(CheckpointsInAStoreTest, RestoreSkipsACorruptCheckpointAndReadsTheNextOne) {
  auto storage = Open(3);
  ASSERT_NE(storage, nullptr);
  test::WriteCheckpoint(storage.get(), 1, "one", {"sst-1"});
  test::WriteCheckpoint(storage.get(), 2, "two", {"sst-1"});
  store_->Replace("chk-2/agg-1.snap", "twX1");
  ASSERT_TRUE(storage->WriteSnapshotFile(3, "agg-0.snap", "never finalised").ok());

  auto sel = SelectRestoreCheckpoint(store_, test::TestJob());
  ASSERT_TRUE(sel.ok()) << sel.status().ToString();
  ASSERT_TRUE(sel->point.has_value());
  EXPECT_EQ(sel->point->metadata.checkpoint_id, 1);
  EXPECT_EQ(sel->point->path, "memory://test/chk-1");
  ASSERT_EQ(sel->warnings.size(), 2u);
  EXPECT_EQ(sel->warnings[0], "skipping chk-3: no _metadata (incomplete checkpoint)");
  EXPECT_NE(sel->warnings[1].find("chk-2/agg-1.snap: checksum mismatch"), std::string::npos)
      << sel->warnings[1];
  const OperatorSnapshot* agg0 = SnapshotsOf(sel->point->metadata, "agg")[0];
  ASSERT_EQ(agg0->files.size(), 2u);
  EXPECT_EQ(*ReadRestoreFile(*sel->point, agg0->files[0]), "one0");
  EXPECT_EQ(*ReadRestoreFile(*sel->point, agg0->files[1]), "content of sst-1");
}

TEST_F(CheckpointsInAStoreTest, ASavepointOutlivesTheCheckpointAndItsSharedFiles) {
  auto storage = Open(1);
  ASSERT_NE(storage, nullptr);
  test::WriteCheckpoint(storage.get(), 1, "one", {"sst-1"});
  ASSERT_TRUE(storage->CreateSavepoint(1, "before-upgrade").ok());
  EXPECT_TRUE(storage->HasSavepoint("before-upgrade"));
  EXPECT_EQ(storage->CreateSavepoint(1, "before-upgrade").code(), StatusCode::kInvalidArgument);
  test::WriteCheckpoint(storage.get(), 2, "two", {"sst-2"});
  EXPECT_EQ(store_->Get("chk-1/_metadata").status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(storage->HasSharedFile("sst-1")) << "the savepoint holds its own copy";

  auto sp = VerifyCheckpoint(store_, "sp-before-upgrade");
  ASSERT_TRUE(sp.ok()) << sp.status().ToString();
  EXPECT_EQ(sp->metadata.savepoint_name, "before-upgrade");
  const OperatorSnapshot* agg0 = SnapshotsOf(sp->metadata, "agg")[0];
  ASSERT_EQ(agg0->files.size(), 2u);
  EXPECT_EQ(agg0->files[1].name, "shared-sst-1");
  EXPECT_EQ(*ReadRestoreFile(*sp, agg0->files[1]), "content of sst-1");
}

TEST_F(CheckpointsInAStoreTest, DiscardingAndForgettingWorkOnObjects) {
  auto storage = Open(5);
  ASSERT_NE(storage, nullptr);
  for (int64_t id = 1; id <= 4; ++id) test::WriteCheckpoint(storage.get(), id, "p", {"sst-1"});
  ASSERT_TRUE(storage->DiscardNewerThan(2).ok());
  auto after_discard = SelectRestoreCheckpoint(store_, test::TestJob());
  ASSERT_TRUE(after_discard.ok());
  EXPECT_EQ(after_discard->point->metadata.checkpoint_id, 2);
  EXPECT_TRUE(after_discard->warnings.empty());

  auto deleted = DeleteCheckpointsExcept(*store_, {1});
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ(*deleted, std::vector<int64_t>{2});
  EXPECT_TRUE(storage->HasSharedFile("sst-1")) << "chk-1 still refers to it";
  deleted = DeleteCheckpointsExcept(*store_, {});
  ASSERT_TRUE(deleted.ok());
  EXPECT_TRUE(store_->Keys().empty());
}

}  // namespace
}  // namespace flow::rt
