#include "kafka_takeover.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include <fmt/format.h>

#include "../connectors/kafka_common.h"
#include "flow/runtime/common/job_id.h"
#include "flow/runtime/common/time.h"
#include "flow/runtime/connectors/kafka_instance.h"
#include "flow/runtime/log/log.h"
#include "kafka_admin.h"

namespace flow::rt::txn_detail {
namespace {

// Admin calls of a pass and each init_transactions attempt: short, so that a stop is not held up.
constexpr int kCallMs = 5000;
// How long the fencing of one instance is tried while the broker is busy or away.
constexpr int64_t kFenceBoundMs = 30000;

// Markers are looked for among this many last records of a progress topic: the marker is
// written a moment before the fencing it explains, and an instance commits at most a few
// transactions (two records each) meanwhile.
constexpr int64_t kMarkerTailRecords = 200;

struct ErrorFree {
  void operator()(rd_kafka_error_t* e) const { rd_kafka_error_destroy(e); }
};

void OnMarkerDelivery(rd_kafka_t*, const rd_kafka_message_t* m, void*) {
  if (m->_private != nullptr) *static_cast<int*>(m->_private) = m->err;
}

}  // namespace

Status ScanProgressTopic(const std::string& brokers,
                         const std::map<std::string, std::string>& connection,
                         const std::string& progress_topic, int64_t from, int timeout_ms,
                         const std::function<bool(std::string_view, std::string_view)>& each) {
  std::map<std::string, std::string> settings = connection;
  settings["bootstrap.servers"] = brokers;
  settings["group.id"] = "flow-takeover-reader";
  settings["enable.auto.commit"] = "false";
  settings["enable.partition.eof"] = "true";
  // Markers are plain records, and open transactions count: read what is written.
  settings["isolation.level"] = "read_uncommitted";
  Result<rd_kafka_t*> made = MakeClient(RD_KAFKA_CONSUMER, settings, "kafka takeover reader");
  if (!made.ok()) return made.status();
  std::unique_ptr<rd_kafka_t, void (*)(rd_kafka_t*)> rk(*made, rd_kafka_destroy);
  Result<TopicBounds> bounds = ProgressTopicBounds(rk.get(), progress_topic, timeout_ms);
  // A topic deleted meanwhile is one more way of not being reachable now, as before.
  if (!bounds.ok()) return Status::Unavailable(bounds.status().message());
  const auto [low, high] = *bounds;
  const int64_t start = from >= 0 ? std::max(low, from) : std::max(low, high - kMarkerTailRecords);
  if (high <= start) return Status::Ok();
  rd_kafka_topic_partition_list_t* parts = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(parts, progress_topic.c_str(), 0)->offset = start;
  rd_kafka_resp_err_t err = rd_kafka_assign(rk.get(), parts);
  rd_kafka_topic_partition_list_destroy(parts);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable(fmt::format("kafka: reading progress topic `{}`: {}", progress_topic,
                                           rd_kafka_err2str(err)));
  }
  const int64_t deadline = SteadyNowMs() + timeout_ms;
  while (SteadyNowMs() < deadline) {
    std::unique_ptr<rd_kafka_message_t, void (*)(rd_kafka_message_t*)> msg(
        rd_kafka_consumer_poll(rk.get(), 200), rd_kafka_message_destroy);
    if (!msg) continue;
    if (msg->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) return Status::Ok();
    if (msg->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return Status::Unavailable(fmt::format("kafka: reading progress topic `{}`: {}",
                                             progress_topic, rd_kafka_message_errstr(msg.get())));
    }
    const bool more = each(msg->key == nullptr
                               ? std::string_view()
                               : std::string_view(static_cast<const char*>(msg->key), msg->key_len),
                           std::string_view(static_cast<const char*>(msg->payload), msg->len));
    if (!more) return Status::Ok();
  }
  return Status::TimedOut(fmt::format("kafka: reading progress topic `{}` took over {} ms",
                                      progress_topic, timeout_ms));
}

Result<std::string> FindTakeoverMarker(const std::string& brokers,
                                       const std::map<std::string, std::string>& connection,
                                       const std::string& progress_topic, int64_t since_wall_ms,
                                       int timeout_ms) {
  std::string taker;
  Status scanned = ScanProgressTopic(
      brokers, connection, progress_topic, -1, timeout_ms,
      [&](std::string_view key, std::string_view value) {
        if (key != kTakeoverMarkerKey) return true;
        // "<wall-clock ms> <instance>"
        const size_t space = value.find(' ');
        if (space == std::string_view::npos) return true;
        const std::string digits(value.substr(0, space));
        if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos ||
            digits.size() > 18) {
          return true;
        }
        if (std::stoll(digits) >= since_wall_ms) taker = std::string(value.substr(space + 1));
        return true;
      });
  if (!scanned.ok()) return scanned;
  return taker;
}

KafkaTakeover::KafkaTakeover(Options options) : options_(std::move(options)) {
  thread_ = std::thread([this] { Run(); });
}

KafkaTakeover::~KafkaTakeover() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void KafkaTakeover::Assigned(const std::string& group) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_.insert(group);
  }
  wake_.notify_all();
}

bool KafkaTakeover::Stopped() {
  std::lock_guard<std::mutex> lock(mu_);
  return stop_;
}

bool KafkaTakeover::Wait(int64_t ms) {
  std::unique_lock<std::mutex> lock(mu_);
  return !wake_.wait_for(lock, std::chrono::milliseconds(ms), [&] { return stop_; });
}

void KafkaTakeover::Run() {
  std::set<std::string> groups;  // every group this instance was ever given partitions of
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return stop_ || !pending_.empty(); });
      if (stop_) return;
      groups.insert(pending_.begin(), pending_.end());
      pending_.clear();
    }
    // Without it a read_committed reader waits for the broker's transaction timeout: worth a
    // warning, never a failure of the job.
    if (Status s = Pass(groups); !s.ok() && !Stopped()) {
      Log(LogLevel::kWarn, "kafka", "looking for stopped instances failed",
          {{"instance", options_.instance}, {"error", s.ToString()}});
    }
  }
}

Result<std::map<std::string, int64_t>> KafkaTakeover::KnownInstances() {
  const std::string prefix = KafkaInstanceProgressPrefix(options_.job_id);
  Result<std::vector<std::string>> topics = TopicsWithPrefix(admin_->rk, prefix, kCallMs);
  if (!topics.ok()) return topics.status();
  std::map<std::string, int64_t> known;
  for (const std::string& topic : *topics) {
    const std::string name = topic.substr(prefix.size());
    // Another job whose id extends this one's with a dot shares the prefix; its names have dots
    // too and are skipped only when invalid: fencing an id nobody uses costs one request.
    if (name == options_.instance || name.size() > 64 || !IsValidJobId(name)) continue;
    Result<TopicBounds> bounds = ProgressTopicBounds(admin_->rk, topic, kCallMs);
    if (!bounds.ok()) return Status::Unavailable(bounds.status().message());
    known[name] = bounds->high;
  }
  return known;
}

Result<std::set<std::string>> KafkaTakeover::LiveInstances(const std::set<std::string>& groups) {
  Result<std::map<std::string, std::string>> members = InstanceMembers(admin_->rk, groups, kCallMs);
  if (!members.ok()) return members.status();
  std::set<std::string> live;
  for (const auto& [name, where] : *members) live.insert(name);
  return live;
}

Status KafkaTakeover::Pass(const std::set<std::string>& groups) {
  if (admin_ == nullptr) {
    Result<std::unique_ptr<MarkerClient>> made =
        MakeMarkerClient(options_.brokers, options_.connection);
    if (!made.ok()) return made.status();
    admin_ = std::move(made).value();
  }
  Result<std::map<std::string, int64_t>> before = KnownInstances();
  if (!before.ok()) return before.status();
  Result<std::set<std::string>> live = LiveInstances(groups);
  if (!live.ok()) return live.status();
  for (const std::string& name : *live) fenced_.erase(name);  // back: fence it again when gone
  std::vector<std::string> gone;
  for (const auto& [name, end] : *before) {
    if (live->count(name) == 0 && fenced_.count(name) == 0) gone.push_back(name);
  }
  if (gone.empty()) return Status::Ok();
  if (!Wait(kTakeoverConfirmMs)) return Status::Ok();
  Result<std::map<std::string, int64_t>> after = KnownInstances();
  if (!after.ok()) return after.status();
  live = LiveInstances(groups);
  if (!live.ok()) return live.status();
  for (const std::string& name : gone) {
    auto it = after->find(name);
    const bool committed = it == after->end() || it->second != before->at(name);
    if (committed || live->count(name) != 0) continue;  // starting, or alive after all
    if (Stopped()) return Status::Ok();
    FLOW_RETURN_IF_ERROR(FenceInstance(admin_.get(), options_, name, [this] { return Stopped(); }));
    fenced_.insert(name);
  }
  return Status::Ok();
}

namespace {

// Writes the takeover marker into `instance`'s progress topic and waits for its delivery.
Status WriteMarker(MarkerClient* admin, const KafkaTakeover::Options& options,
                   const std::string& instance) {
  const std::string topic = KafkaProgressTopic(options.job_id, instance);
  const std::string value = fmt::format("{} {}", WallNowMs(), options.instance);
  int& delivery = admin->delivery;
  delivery = RD_KAFKA_RESP_ERR__IN_PROGRESS;
  rd_kafka_resp_err_t err = rd_kafka_producev(
      admin->rk, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(0),
      RD_KAFKA_V_KEY(kTakeoverMarkerKey.data(), kTakeoverMarkerKey.size()),
      RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_OPAQUE(&delivery), RD_KAFKA_V_END);
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    (void)rd_kafka_flush(admin->rk, kCallMs);
    if (delivery == RD_KAFKA_RESP_ERR__IN_PROGRESS) {
      // Not delivered in time: drop it, so that its report cannot arrive later.
      (void)rd_kafka_purge(admin->rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
      (void)rd_kafka_flush(admin->rk, kCallMs);
    }
    err = static_cast<rd_kafka_resp_err_t>(delivery);
  }
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable(fmt::format("kafka: takeover marker for `{}` into `{}` failed: {}",
                                           instance, topic, rd_kafka_err2str(err)));
  }
  return Status::Ok();
}

}  // namespace

MarkerClient::~MarkerClient() {
  if (rk != nullptr) rd_kafka_destroy(rk);
}

Result<std::unique_ptr<MarkerClient>> MakeMarkerClient(
    const std::string& brokers, const std::map<std::string, std::string>& connection) {
  std::map<std::string, std::string> settings = connection;
  settings["bootstrap.servers"] = brokers;
  Result<rd_kafka_conf_t*> conf = MakeKafkaConf(settings, "kafka takeover admin");
  if (!conf.ok()) return conf.status();
  rd_kafka_conf_set_dr_msg_cb(*conf, &OnMarkerDelivery);
  char err[512];
  auto client = std::make_unique<MarkerClient>();
  client->rk = rd_kafka_new(RD_KAFKA_PRODUCER, *conf, err, sizeof err);
  if (client->rk == nullptr) {
    rd_kafka_conf_destroy(*conf);
    return Status::InvalidArgument(
        fmt::format("kafka takeover admin: cannot create client: {}", err));
  }
  return client;
}

Status FenceInstance(MarkerClient* admin, const KafkaTakeover::Options& options,
                     const std::string& instance, const std::function<bool()>& stopped) {
  // First the marker: were the instance alive after all, the fencing would find it at work, and
  // the marker tells it to restart instead of taking itself for a duplicate.
  FLOW_RETURN_IF_ERROR(WriteMarker(admin, options, instance));
  const std::string id = KafkaTransactionalId(options.job_id, instance);
  std::map<std::string, std::string> settings = options.connection;
  settings["bootstrap.servers"] = options.brokers;
  settings["transactional.id"] = id;
  settings["transaction.timeout.ms"] = std::to_string(options.transaction_timeout_ms);
  Result<rd_kafka_t*> made = MakeClient(RD_KAFKA_PRODUCER, settings, "kafka takeover producer");
  if (!made.ok()) return made.status();
  std::unique_ptr<rd_kafka_t, void (*)(rd_kafka_t*)> producer(*made, rd_kafka_destroy);
  const int64_t start = SteadyNowMs();
  const int64_t deadline = start + kFenceBoundMs;
  while (true) {
    // The broker aborts the open transaction and answers once its markers are written;
    // librdkafka resumes a timed-out init_transactions when it is called again.
    std::unique_ptr<rd_kafka_error_t, ErrorFree> error(
        rd_kafka_init_transactions(producer.get(), kCallMs));
    if (!error) break;
    if (!rd_kafka_error_is_retriable(error.get()) || SteadyNowMs() >= deadline || stopped()) {
      return Status::Unavailable(fmt::format("kafka: fencing transactional id `{}` failed: {}", id,
                                             rd_kafka_error_string(error.get())));
    }
  }
  Log(LogLevel::kInfo, "kafka", "took over a stopped instance: its open transaction is aborted",
      {{"instance", options.instance},
       {"stopped_instance", instance},
       {"transactional_id", id},
       {"ms", std::to_string(SteadyNowMs() - start)}});
  return Status::Ok();
}

}  // namespace flow::rt::txn_detail
