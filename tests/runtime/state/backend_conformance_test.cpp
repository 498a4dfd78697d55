// The same behaviour asked of both keyed state backends: typed value/list/map state, TTL, timers,
// snapshot -> restore equality and rescaling, checked against reference containers kept here.
// The rocksdb runs use a small cache (64 entries) so most accesses go through RocksDB.

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "backend_test_util.h"
#include "flow/runtime/state/snapshot_scope.h"

namespace flow::rt {
namespace {

using test::MakeBackend;

class BackendTest : public ::testing::TestWithParam<StateBackendKind> {};

TEST_P(BackendTest, ValueListMapBasics) {
  auto b = MakeBackend(GetParam(), KeyGroupSpan::All());
  auto* v = b->CreateValueState<std::string, int64_t>("v");
  auto* l = b->CreateListState<int64_t, std::string>("l");
  auto* m = b->CreateMapState<int64_t, int64_t, double>("m");
  EXPECT_EQ(v->Get("a"), nullptr);
  v->Put("a", 5);
  v->GetOrInsert("b") += 3;
  v->GetOrInsert("b") += 4;
  ASSERT_NE(v->Get("a"), nullptr);
  EXPECT_EQ(*v->Get("a"), 5);
  EXPECT_EQ(*v->Get("b"), 7);
  EXPECT_TRUE(v->Remove("a"));
  EXPECT_FALSE(v->Remove("a"));
  l->Add(1, "x");
  l->Add(1, "y");
  EXPECT_EQ(*l->Get(1), (std::vector<std::string>{"x", "y"}));
  m->Put(1, 10, 1.5);
  m->Put(1, 11, 2.5);
  m->GetOrInsert(2, 20) = 9;
  double sum = 0;
  m->ForEach(1, [&](const int64_t&, double& x) { sum += x; });
  EXPECT_EQ(sum, 4.0);
  EXPECT_EQ(b->TotalEntries(), 1u + 1u + 3u);
  EXPECT_TRUE(m->Remove(1, 10));
  EXPECT_TRUE(m->Remove(1, 11));
  EXPECT_FALSE(m->Remove(1, 11));
  EXPECT_TRUE(m->RemoveKey(2));
  v->Remove("b");
  l->Remove(1);
  EXPECT_EQ(b->TotalEntries(), 0u);
}

// Reference contents, independent of the backends.
struct Reference {
  std::map<int64_t, int64_t> values;
  std::map<int64_t, std::vector<int64_t>> lists;
  std::map<std::pair<int64_t, int64_t>, std::string> maps;
  std::set<std::pair<int64_t, int64_t>> timers;  // (timestamp, key)
};

struct States {
  States(StateBackendKind kind, KeyGroupSpan range, size_t cache = 64)
      : backend(MakeBackend(kind, range, cache)) {
    v = backend->CreateValueState<int64_t, int64_t>("v");
    l = backend->CreateListState<int64_t, int64_t>("l");
    m = backend->CreateMapState<int64_t, int64_t, std::string>("m");
    t = backend->CreateTimerService<int64_t>("t");
  }
  std::unique_ptr<KeyedStateBackend> backend;
  ValueState<int64_t, int64_t>* v;
  ListState<int64_t, int64_t>* l;
  MapState<int64_t, int64_t, std::string>* m;
  TimerService<int64_t>* t;
};

// Random puts, appends, increments and removals, mirrored into `ref`.
void Mutate(States* s, Reference* ref, uint32_t seed, int ops) {
  std::mt19937 rng(seed);
  for (int i = 0; i < ops; ++i) {
    int64_t key = static_cast<int64_t>(rng() % 700);
    int64_t x = static_cast<int64_t>(rng() % 1000);
    switch (rng() % 7) {
      case 0:
        s->v->Put(key, x);
        ref->values[key] = x;
        break;
      case 1:
        s->v->GetOrInsert(key) += x;
        ref->values[key] += x;
        break;
      case 2:
        EXPECT_EQ(s->v->Remove(key), ref->values.erase(key) > 0);
        break;
      case 3:
        s->l->Add(key, x);
        ref->lists[key].push_back(x);
        break;
      case 4:
        s->m->Put(key, x % 7, std::to_string(x));
        ref->maps[{key, x % 7}] = std::to_string(x);
        break;
      case 5:
        EXPECT_EQ(s->m->Remove(key, x % 7), ref->maps.erase({key, x % 7}) > 0);
        break;
      default:
        s->t->Register(key, x);
        ref->timers.insert({x, key});
    }
  }
}

// `s` holds exactly the entries of `ref` whose key group it owns.
void ExpectHolds(States* s, const Reference& ref) {
  size_t expected = 0;
  auto owned = [&](int64_t k) { return s->backend->Owns(s->backend->KeyGroupFor(k)); };
  for (const auto& [k, x] : ref.values) {
    if (!owned(k)) continue;
    ++expected;
    int64_t* got = s->v->Get(k);
    ASSERT_NE(got, nullptr) << "value key " << k;
    EXPECT_EQ(*got, x);
  }
  for (const auto& [k, xs] : ref.lists) {
    if (!owned(k)) continue;
    ++expected;
    ASSERT_NE(s->l->Get(k), nullptr) << "list key " << k;
    EXPECT_EQ(*s->l->Get(k), xs);
  }
  for (const auto& [kk, x] : ref.maps) {
    if (!owned(kk.first)) continue;
    ++expected;
    ASSERT_NE(s->m->Get(kk.first, kk.second), nullptr);
    EXPECT_EQ(*s->m->Get(kk.first, kk.second), x);
  }
  size_t timers = 0;
  for (const auto& [ts, k] : ref.timers) timers += owned(k);
  EXPECT_EQ(s->t->size(), timers);
  EXPECT_EQ(s->backend->TotalEntries(), expected + timers);
}

TEST_P(BackendTest, RandomOperationsMatchTheReference) {
  States s(GetParam(), KeyGroupSpan::All());
  Reference ref;
  Mutate(&s, &ref, 11, 20000);
  ExpectHolds(&s, ref);
  // ForEach visits every live value once; changes made through it stick.
  std::map<int64_t, int64_t> seen;
  s.v->ForEach([&](const int64_t& k, int64_t& x) {
    seen[k] = x;
    x += 1;
  });
  EXPECT_EQ(seen, ref.values);
  for (auto& [k, x] : ref.values) ++x;
  ExpectHolds(&s, ref);
}

// A small cache, trimmed as the watermark moves and written back by snapshots and async
// snapshots between bursts of operations: entries are created, evicted, loaded again and removed
// in every order. rocksdb removes an entry it never wrote without a tombstone, so a removal must
// never let an older stored value of the key come back (a Remove or a lookup would then disagree
// with the reference, or an extra entry would be counted).
TEST_P(BackendTest, RandomOperationsAcrossTrimsAndSnapshotsMatchTheReference) {
  States s(GetParam(), KeyGroupSpan::All(), 8);
  Reference ref;
  test::MemoryFiles files;
  for (int burst = 0; burst < 120; ++burst) {
    Mutate(&s, &ref, 100 + static_cast<uint32_t>(burst), 60);
    s.backend->AdvanceWatermark(burst);
    if (burst % 7 == 3) {
      BinaryWriter w;
      s.backend->SnapshotState(&w);
    }
    if (burst % 11 == 5) {
      // What a snapshot holds is what the state was at that moment, whatever was cached, evicted
      // or removed before it.
      auto written = test::SnapshotNow(s.backend.get(), burst, "op-0.snap", &files);
      ASSERT_FALSE(written.empty());
      States restored(GetParam(), KeyGroupSpan::All(), 8);
      ASSERT_TRUE(restored.backend->RestoreFrom(written[0], &files).ok());
      ExpectHolds(&restored, ref);
    }
    if (burst % 30 == 29) ExpectHolds(&s, ref);
  }
  ExpectHolds(&s, ref);
}

TEST_P(BackendTest, FullSnapshotRestoresIntoEitherKind) {
  States s(GetParam(), KeyGroupSpan::All());
  Reference ref;
  Mutate(&s, &ref, 5, 8000);
  BinaryWriter w;
  s.backend->SnapshotState(&w);
  for (StateBackendKind into : {StateBackendKind::kHeap, StateBackendKind::kRocksDb}) {
    States r(into, KeyGroupSpan::All());
    BinaryReader reader(w.data());
    ASSERT_TRUE(r.backend->RestoreState(&reader).ok());
    ExpectHolds(&r, ref);
  }
}

TEST_P(BackendTest, AsyncSnapshotRoundTrips) {
  States s(GetParam(), KeyGroupSpan::All());
  Reference ref;
  Mutate(&s, &ref, 6, 8000);
  test::MemoryFiles files;
  auto written = test::SnapshotNow(s.backend.get(), 1, "op-0.snap", &files);
  ASSERT_FALSE(written.empty());
  States r(GetParam(), KeyGroupSpan::All());
  ASSERT_TRUE(r.backend->RestoreFrom(written[0], &files).ok());
  ExpectHolds(&r, ref);
}

// Rescaling 4 -> 2 and 2 -> 8: every key's state lands in the subtask owning its key group.
TEST_P(BackendTest, RescaleMovesEveryKeyToItsOwner) {
  for (auto [from, to] : {std::pair{4u, 2u}, std::pair{2u, 8u}}) {
    Reference ref;
    test::MemoryFiles files;
    std::vector<StoredFile> handles;
    std::vector<std::string> full_snapshots;
    for (uint32_t sub = 0; sub < from; ++sub) {
      States s(GetParam(), KeyGroupSpan::ForSubtask(sub, from));
      // Each old subtask only gets the keys it owns (as the engine routes them).
      Reference all;
      States scratch(StateBackendKind::kHeap, KeyGroupSpan::All());
      Mutate(&scratch, &all, 100 + sub, 6000);
      for (const auto& [k, x] : all.values) {
        if (s.backend->Owns(s.backend->KeyGroupFor(k))) s.v->Put(k, x), ref.values[k] = x;
      }
      for (const auto& [k, xs] : all.lists) {
        if (!s.backend->Owns(s.backend->KeyGroupFor(k))) continue;
        for (int64_t x : xs) s.l->Add(k, x);
        ref.lists[k] = xs;
      }
      for (const auto& [kk, x] : all.maps) {
        if (s.backend->Owns(s.backend->KeyGroupFor(kk.first)))
          s.m->Put(kk.first, kk.second, x), ref.maps[kk] = x;
      }
      for (const auto& [ts, k] : all.timers) {
        if (s.backend->Owns(s.backend->KeyGroupFor(k)))
          s.t->Register(k, ts), ref.timers.insert({ts, k});
      }
      auto w = test::SnapshotNow(s.backend.get(), 1, "op-" + std::to_string(sub), &files);
      ASSERT_FALSE(w.empty());
      handles.push_back(w[0]);
      BinaryWriter full;  // the portable format the engine writes today
      s.backend->SnapshotState(&full);
      full_snapshots.push_back(full.Release());
    }
    size_t total = 0;
    for (uint32_t sub = 0; sub < to; ++sub) {
      States n(GetParam(), KeyGroupSpan::ForSubtask(sub, to));
      for (const StoredFile& h : handles) ASSERT_TRUE(n.backend->RestoreFrom(h, &files).ok());
      ExpectHolds(&n, ref);
      total += n.backend->TotalEntries();
      States f(GetParam(), KeyGroupSpan::ForSubtask(sub, to));
      for (const std::string& bytes : full_snapshots) {
        BinaryReader r(bytes);
        ASSERT_TRUE(f.backend->RestoreState(&r).ok());
      }
      ExpectHolds(&f, ref);
    }
    EXPECT_EQ(total, ref.values.size() + ref.lists.size() + ref.maps.size() + ref.timers.size())
        << from << " -> " << to;
  }
}

// A restore scope with a limit takes only those key groups, in both snapshot formats: a scaled-out
// job adopts one repartition partition's groups from another instance's snapshot this way.
TEST_P(BackendTest, ARestoreScopeLimitTakesOnlyItsKeyGroups) {
  States s(GetParam(), KeyGroupSpan::All());
  Reference ref;
  Mutate(&s, &ref, 9, 8000);
  test::MemoryFiles files;
  auto written = test::SnapshotNow(s.backend.get(), 1, "op-0.snap", &files);
  ASSERT_FALSE(written.empty());
  BinaryWriter full;
  s.backend->SnapshotState(&full);
  const KeyGroupSpan limit{32, 64};
  auto in_limit = [&](int64_t k) { return limit.Contains(s.backend->KeyGroupFor(k)); };
  Reference want;
  for (const auto& [k, x] : ref.values)
    if (in_limit(k)) want.values[k] = x;
  for (const auto& [k, xs] : ref.lists)
    if (in_limit(k)) want.lists[k] = xs;
  for (const auto& [kk, x] : ref.maps)
    if (in_limit(kk.first)) want.maps[kk] = x;
  for (const auto& [ts, k] : ref.timers)
    if (in_limit(k)) want.timers.insert({ts, k});
  ASSERT_FALSE(want.values.empty());
  ASSERT_LT(want.values.size(), ref.values.size());
  {
    States r(GetParam(), KeyGroupSpan::All());
    SnapshotRestoreScope scope(&files, {}, limit);
    ASSERT_TRUE(r.backend->RestoreFrom(written[0], &files).ok());
    ExpectHolds(&r, want);
  }
  {
    States r(GetParam(), KeyGroupSpan::All());
    SnapshotRestoreScope scope(&files, {}, limit);
    BinaryReader reader(full.data());
    ASSERT_TRUE(r.backend->RestoreState(&reader).ok());
    ExpectHolds(&r, want);
  }
  // Outside a limited scope the next restore takes everything again.
  States r(GetParam(), KeyGroupSpan::All());
  ASSERT_TRUE(r.backend->RestoreFrom(written[0], &files).ok());
  ExpectHolds(&r, ref);
}

TEST_P(BackendTest, ProcessingTimeTtl) {
  TimestampMs now = 1000;
  auto b = MakeBackend(GetParam(), KeyGroupSpan::All(), 8, [&now] { return now; });
  auto* v = b->CreateValueState<int64_t, int64_t>("v", StateTtl{100});
  auto* m = b->CreateMapState<int64_t, int64_t, int64_t>("m", StateTtl{100});
  for (int64_t k = 0; k < 50; ++k) {
    v->Put(k, k);
    m->Put(k, 1, k);
  }
  now = 1050;
  for (int64_t k = 0; k < 25; ++k) {
    v->Put(k, k * 2);  // restarts the lifetime
    m->Put(k, 2, k);
  }
  now = 1100;  // the first writes expire now
  for (int64_t k = 0; k < 50; ++k) {
    if (k < 25) {
      ASSERT_NE(v->Get(k), nullptr);
      EXPECT_EQ(*v->Get(k), k * 2);
      EXPECT_EQ(m->Get(k, 1), nullptr);
      EXPECT_NE(m->Get(k, 2), nullptr);
    } else {
      EXPECT_EQ(v->Get(k), nullptr);
      EXPECT_EQ(m->Get(k, 1), nullptr);
    }
  }
  b->CleanupExpired();
  EXPECT_EQ(b->TotalEntries(), 25u + 25u);
  now = 1150;
  b->CleanupExpired();
  EXPECT_EQ(b->TotalEntries(), 0u);
}

TEST_P(BackendTest, EventTimeTtlFollowsTheWatermark) {
  auto b = MakeBackend(GetParam(), KeyGroupSpan::All(), 4);
  auto* v = b->CreateValueState<int64_t, int64_t>("v", StateTtl{10, TtlTimeDomain::kEventTime});
  b->AdvanceWatermark(100);
  for (int64_t k = 0; k < 20; ++k) v->Put(k, k);
  b->AdvanceWatermark(109);
  for (int64_t k = 0; k < 20; ++k) EXPECT_NE(v->Get(k), nullptr);
  b->AdvanceWatermark(110);
  for (int64_t k = 0; k < 20; ++k) EXPECT_EQ(v->Get(k), nullptr);
  EXPECT_EQ(b->TotalEntries(), 0u);
}

TEST_P(BackendTest, TimersFireInOrderAndSurviveSnapshots) {
  States s(GetParam(), KeyGroupSpan::All());
  Reference ref;
  Mutate(&s, &ref, 9, 3000);
  test::MemoryFiles files;
  auto w = test::SnapshotNow(s.backend.get(), 1, "t", &files);
  States r(GetParam(), KeyGroupSpan::All());
  ASSERT_TRUE(r.backend->RestoreFrom(w[0], &files).ok());
  std::vector<std::pair<int64_t, int64_t>> fired;
  r.t->Advance(500, [&](const int64_t& k, const VoidNamespace&, TimestampMs ts) {
    fired.push_back({ts, k});
  });
  std::vector<std::pair<int64_t, int64_t>> expected;
  for (const auto& e : ref.timers) {
    if (e.first <= 500) expected.push_back(e);
  }
  std::sort(fired.begin(), fired.end());
  EXPECT_EQ(fired, expected);
  for (size_t i = 1; i < fired.size(); ++i) EXPECT_LE(fired[i - 1].first, fired[i].first);
}

TEST_P(BackendTest, ClearDropsEverything) {
  States s(GetParam(), KeyGroupSpan::All());
  Reference ref;
  Mutate(&s, &ref, 3, 2000);
  s.backend->Clear();
  EXPECT_EQ(s.backend->TotalEntries(), 0u);
  EXPECT_EQ(s.v->Get(ref.values.begin()->first), nullptr);
}

INSTANTIATE_TEST_SUITE_P(Kinds, BackendTest,
                         ::testing::Values(StateBackendKind::kHeap, StateBackendKind::kRocksDb),
                         test::KindName);

TEST(StateBackendOptionsTest, ParsesKinds) {
  EXPECT_EQ(*ParseStateBackendKind("heap"), StateBackendKind::kHeap);
  EXPECT_EQ(*ParseStateBackendKind("rocksdb"), StateBackendKind::kRocksDb);
  auto bad = ParseStateBackendKind("rocks");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'rocks'"), std::string::npos);
}

TEST(StateBackendOptionsTest, MaxParallelismBeyondTheKeyPrefixIsRefused) {
  StateBackendOptions o;
  o.kind = StateBackendKind::kRocksDb;
  auto b = KeyedStateBackend::Make(KeyGroupSpan::All(1u << 16), 1u << 16, nullptr, o);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(b.status().message().find("32768"), std::string::npos);
}

// Scratch databases of processes that are gone are removed when a backend opens; those of live
// processes stay.
TEST(StateBackendOptionsTest, DatabasesOfDeadProcessesAreSwept) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(test::TestTmpDir()) / ("flow-state-sweep-" + std::to_string(getpid()));
  fs::remove_all(dir);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  auto hex = [](pid_t p) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%x", static_cast<unsigned>(p));
    return std::string(buf);
  };
  fs::path dead = dir / ("flow-rocksdb-" + hex(child) + "-1234-0");
  fs::path dead_chk = dir / ("flow-rocksdb-" + hex(child) + "-1234-0-chk-3");
  fs::path live = dir / ("flow-rocksdb-" + hex(getppid()) + "-99-0");
  fs::path other = dir / "unrelated";
  for (const fs::path& p : {dead, dead_chk, live, other}) fs::create_directories(p);
  StateBackendOptions o;
  o.kind = StateBackendKind::kRocksDb;
  o.local_dir = dir.string();
  {
    auto b = KeyedStateBackend::Make(KeyGroupSpan::All(), kDefaultMaxParallelism, nullptr, o);
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    EXPECT_FALSE(fs::exists(dead));
    EXPECT_FALSE(fs::exists(dead_chk));
    EXPECT_TRUE(fs::exists(live));
    EXPECT_TRUE(fs::exists(other));
  }
  fs::remove_all(dir);
}

TEST(StateBackendOptionsTest, UnwritableLocalDirIsAnError) {
  StateBackendOptions o;
  o.kind = StateBackendKind::kRocksDb;
  o.local_dir = "/proc/flow-no-such-dir";
  auto b = KeyedStateBackend::Make(KeyGroupSpan::All(), kDefaultMaxParallelism, nullptr, o);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("/proc/flow-no-such-dir"), std::string::npos);
}

}  // namespace
}  // namespace flow::rt
