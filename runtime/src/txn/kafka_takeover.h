#pragma once
// KafkaTakeover: ends at once the transaction that an instance which died for good left open.
//
// A SIGKILLed instance leaves its transaction open: output records and the offsets of the
// partitions it read (KIP-447). Until that transaction ends, the instance that gets those
// partitions cannot read their committed offsets (the broker answers UNSTABLE_OFFSET_COMMIT) and
// read_committed readers of the output stop at its first record. An instance that comes back
// ends it with its own init_transactions; one that never does would hold everything up until
// transaction.timeout.ms (about 71 s by default).
//
// So whenever this instance is given partitions, a background pass looks for instances that are
// gone: known (their progress topic exists) but with no member in any of the job's consumer
// groups, both at the start of the pass and kTakeoverConfirmMs later, and no commit of theirs in
// between (their progress topic's end stood still). For each it writes a takeover marker into
// that instance's progress topic and then calls init_transactions with its transactional id: the
// broker aborts what it left open and fences it. This cannot break exactly-once (fencing is what
// a restart of that instance would do); it only saves the wait. An instance that was alive after
// all finds its producer fenced, finds the marker and restarts from its last commit
// (kReassigned); fenced without a marker, it was fenced by a second process under its name
// (kFenced, exit 3).

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>

#include "flow/runtime/common/status.h"

struct rd_kafka_s;

namespace flow::rt::txn_detail {

// How long an instance must stay away (no member, no commit) before it is fenced: a starting
// instance creates its progress topic a moment before its sources join their groups.
inline constexpr int64_t kTakeoverConfirmMs = 2000;
// Key of the marker record; its value is "<wall-clock ms> <instance that took over>".
inline constexpr std::string_view kTakeoverMarkerKey = "flow-takeover";
// A marker counts for an instance fenced no later than this after its run began: the marker is
// written just before the fencing, which may find the instance already restarted.
inline constexpr int64_t kTakeoverMarkerSlackMs = 30000;

// Calls `each(key, value)` for the records of `progress_topic` partition 0 from offset `from` (-1:
// its last kMarkerTailRecords records) to its end, open transactions' records included, until it
// returns false.
[[nodiscard]] Status ScanProgressTopic(
    const std::string& brokers, const std::map<std::string, std::string>& connection,
    const std::string& progress_topic, int64_t from, int timeout_ms,
    const std::function<bool(std::string_view, std::string_view)>& each);

// The instance that wrote the newest takeover marker of `progress_topic` (partition 0, among its
// last records) stamped at or after `since_wall_ms`, or "" when there is none.
[[nodiscard]] Result<std::string> FindTakeoverMarker(
    const std::string& brokers, const std::map<std::string, std::string>& connection,
    const std::string& progress_topic, int64_t since_wall_ms, int timeout_ms);

// The admin client of the takeover: a producer whose delivery reports of markers land in
// `delivery` (an rd_kafka_resp_err_t), which outlives the client.
struct MarkerClient {
  rd_kafka_s* rk = nullptr;
  int delivery = 0;
  ~MarkerClient();
};

class KafkaTakeover {
 public:
  struct Options {
    std::string brokers;
    std::map<std::string, std::string> connection;  // security.*, sasl.*, ssl.* settings
    std::string job_id;
    std::string instance;                // this instance: never fenced
    int64_t transaction_timeout_ms = 0;  // for the fencing producer; at most the broker's maximum
    int operation_timeout_ms = 30000;
  };

  explicit KafkaTakeover(Options options);
  // Ends a pass in progress within about a second.
  ~KafkaTakeover();
  KafkaTakeover(const KafkaTakeover&) = delete;
  KafkaTakeover& operator=(const KafkaTakeover&) = delete;

  // This instance was given partitions of consumer group `group`: a pass runs soon. Never blocks.
  void Assigned(const std::string& group);

 private:
  void Run();
  // One look for instances that are gone, and the fencing of each.
  [[nodiscard]] Status Pass(const std::set<std::string>& groups);
  // Instances of the job that have a progress topic, with that topic's end offset.
  [[nodiscard]] Result<std::map<std::string, int64_t>> KnownInstances();
  [[nodiscard]] Result<std::set<std::string>> LiveInstances(const std::set<std::string>& groups);
  // Sleeps `ms` unless stopped first; false when stopped.
  bool Wait(int64_t ms);
  bool Stopped();

  const Options options_;
  std::unique_ptr<MarkerClient> admin_;  // made by the first pass, on the pass thread
  std::set<std::string> fenced_;         // by this object: each instance once
  std::mutex mu_;
  std::condition_variable wake_;
  std::set<std::string> pending_;  // groups assigned since the last pass began
  bool stop_ = false;
  std::thread thread_;
};

[[nodiscard]] Result<std::unique_ptr<MarkerClient>> MakeMarkerClient(
    const std::string& brokers, const std::map<std::string, std::string>& connection);
// Writes a takeover marker into `instance`'s progress topic (value "<ms> <options.instance>"),
// then calls init_transactions with its transactional id until the broker has aborted what it
// left open and fenced it (at most 30 s, or until `stopped`). kUnavailable naming the step.
[[nodiscard]] Status FenceInstance(MarkerClient* admin, const KafkaTakeover::Options& options,
                                   const std::string& instance,
                                   const std::function<bool()>& stopped);

}  // namespace flow::rt::txn_detail
