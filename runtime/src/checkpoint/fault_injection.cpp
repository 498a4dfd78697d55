#include "flow/runtime/checkpoint/fault_injection.h"

#include <signal.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <mutex>

namespace flow::rt {

namespace fault_detail {
std::atomic<bool> g_armed{false};
}  // namespace fault_detail

namespace {

struct Entry {
  bool error = false;  // error: kind (return a Status) instead of killing
  std::string point;
  std::vector<std::string> args;  // "*" matches anything
  uint64_t nth = 1;
  uint64_t hits = 0;
};

std::mutex g_mu;
std::vector<Entry> g_entries;  // guarded by g_mu

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    out.push_back(
        s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

bool ParseU64(std::string_view s, uint64_t* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

const FaultPointInfo* FindPoint(std::string_view name) {
  for (const FaultPointInfo& p : KnownFaultPoints()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string ErrorList() {
  std::string s;
  for (const FaultPointInfo& p : KnownFaultPoints()) {
    if (!p.errors) continue;
    if (!s.empty()) s += ", ";
    s += p.name;
  }
  return s;
}

std::string KnownList() {
  std::string s;
  for (const FaultPointInfo& p : KnownFaultPoints()) {
    if (!s.empty()) s += ", ";
    s += p.name;
  }
  return s + ", random:<seed>";
}

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

Status ParseEntry(std::string_view text, std::vector<Entry>* out) {
  std::vector<std::string_view> parts = Split(text, ':');
  const bool error = parts[0] == "error";
  if (error) {
    parts.erase(parts.begin());
    if (parts.empty() || parts[0] == "random") {
      return Status::InvalidArgument("FLOW_FAULT entry '" + std::string(text) +
                                     "': error: needs a point (one of " + ErrorList() + ")");
    }
  }
  if (parts[0] == "random") {
    uint64_t seed = 0;
    if (parts.size() != 2 || !ParseU64(parts[1], &seed)) {
      return Status::InvalidArgument("FLOW_FAULT entry '" + std::string(text) +
                                     "': expected random:<seed>");
    }
    uint64_t state = seed;
    std::vector<const FaultPointInfo*> points;
    for (const FaultPointInfo& p : KnownFaultPoints()) {
      if (p.random) points.push_back(&p);
    }
    const FaultPointInfo& p = *points[SplitMix64(&state) % points.size()];
    Entry e;
    e.point = std::string(p.name);
    e.args.assign(static_cast<size_t>(p.args), "*");
    e.nth = 1 + SplitMix64(&state) % 3;
    out->push_back(std::move(e));
    return Status::Ok();
  }
  const FaultPointInfo* p = FindPoint(parts[0]);
  if (p == nullptr) {
    return Status::InvalidArgument("FLOW_FAULT entry '" + std::string(text) +
                                   "': unknown fault point '" + std::string(parts[0]) +
                                   "' (known: " + KnownList() + ")");
  }
  if (error && !p->errors) {
    return Status::InvalidArgument("FLOW_FAULT entry '" + std::string(text) +
                                   "': " + std::string(p->name) +
                                   " only kills the process; error: works with " + ErrorList());
  }
  size_t nargs = static_cast<size_t>(p->args);
  if (parts.size() != 1 + nargs && parts.size() != 2 + nargs) {
    return Status::InvalidArgument("FLOW_FAULT entry '" + std::string(text) +
                                   "': " + std::string(p->name) + " takes " +
                                   std::to_string(nargs) + " argument(s) and an optional :nth");
  }
  Entry e;
  e.error = error;
  e.point = std::string(p->name);
  for (size_t i = 0; i < nargs; ++i) {
    if (parts[1 + i].empty()) {
      return Status::InvalidArgument("FLOW_FAULT entry '" + std::string(text) +
                                     "': empty argument " + std::to_string(i + 1) +
                                     " (use * to match any)");
    }
    e.args.emplace_back(parts[1 + i]);
  }
  if (parts.size() == 2 + nargs && (!ParseU64(parts.back(), &e.nth) || e.nth == 0)) {
    return Status::InvalidArgument("FLOW_FAULT entry '" + std::string(text) +
                                   "': nth must be a positive integer, got '" +
                                   std::string(parts.back()) + "'");
  }
  out->push_back(std::move(e));
  return Status::Ok();
}

[[noreturn]] void Die(const Entry& e) {
  // Built with append: GCC 12 warns falsely (-Wrestrict) on chains of `"literal" + string`.
  std::string msg = "fault injection: killing the process at ";
  msg.append(e.point);
  for (const std::string& a : e.args) msg.append(":").append(a);
  msg.append(" (hit ").append(std::to_string(e.hits)).append(")\n");
  // write(2), not stdio: nothing buffered is flushed, exactly like a crash.
  ssize_t ignored = ::write(STDERR_FILENO, msg.data(), msg.size());
  (void)ignored;
  ::kill(::getpid(), SIGKILL);
  ::_exit(137);  // not reached: SIGKILL cannot be caught
}

}  // namespace

const std::vector<FaultPointInfo>& KnownFaultPoints() {
  static const std::vector<FaultPointInfo> kPoints = {
      {"after-barrier", 2},
      {"during-snapshot-write", 0},
      {"after-state-before-metadata", 0},
      {"after-metadata", 0},
      {"during-restore", 0},
      {"after-precommit", 0},
      {"during-commit", 0},
      {"after-commit-before-cleanup", 0},
      {"before-batch", 2, /*errors=*/true, /*random=*/false},
  };
  return kPoints;
}

Status ConfigureFaults(std::string_view spec) {
  std::vector<Entry> entries;
  if (!spec.empty()) {
    for (std::string_view item : Split(spec, ',')) {
      if (item.empty())
        return Status::InvalidArgument("FLOW_FAULT '" + std::string(spec) + "': empty entry");
      FLOW_RETURN_IF_ERROR(ParseEntry(item, &entries));
    }
  }
  std::lock_guard<std::mutex> lock(g_mu);
  g_entries = std::move(entries);
  fault_detail::g_armed.store(!g_entries.empty(), std::memory_order_relaxed);
  return Status::Ok();
}

Status ConfigureFaultsFromEnv() {
  const char* v = std::getenv("FLOW_FAULT");
  return ConfigureFaults(v == nullptr ? std::string_view() : std::string_view(v));
}

void DisarmFaults() {
  ConfigureFaults("").IgnoreError();
}  // "" always parses

std::string DescribeFaults() {
  std::lock_guard<std::mutex> lock(g_mu);
  std::string s;
  for (const Entry& e : g_entries) {
    if (!s.empty()) s += ",";
    if (e.error) s += "error:";
    s.append(e.point);
    for (const std::string& a : e.args) s.append(":").append(a);
    s.append(":").append(std::to_string(e.nth));
  }
  return s;
}

namespace fault_detail {

// The injected error of the first entry that matches for its nth time; kill entries die here.
Status Match(std::string_view point, std::string_view arg1, std::string_view arg2) {
  std::lock_guard<std::mutex> lock(g_mu);
  Status injected;
  for (Entry& e : g_entries) {
    if (e.point != point) continue;
    if (e.args.size() > 0 && e.args[0] != "*" && e.args[0] != arg1) continue;
    if (e.args.size() > 1 && e.args[1] != "*" && e.args[1] != arg2) continue;
    if (++e.hits != e.nth) continue;
    if (!e.error) Die(e);
    if (injected.ok()) {
      std::string msg = "fault injection: error at ";
      msg.append(e.point);
      for (const std::string& a : e.args) msg.append(":").append(a);
      msg.append(" (hit ").append(std::to_string(e.hits)).append(")");
      injected = Status::Unavailable(msg);
    }
  }
  return injected;
}

void Hit(std::string_view point, std::string_view arg1, std::string_view arg2) {
  // Only points that accept error: entries can have one; those call HitStatus.
  Match(point, arg1, arg2).IgnoreError();
}

Status HitStatus(std::string_view point, std::string_view arg1, std::string_view arg2) {
  return Match(point, arg1, arg2);
}

void Hit(std::string_view point, int64_t checkpoint, std::string_view op) {
  Hit(point, std::to_string(checkpoint), op);
}

}  // namespace fault_detail

}  // namespace flow::rt
