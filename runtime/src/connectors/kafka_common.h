#pragma once
// Helpers shared by the Kafka source and sink: configuration, metadata, error mapping.

#include <librdkafka/rdkafka.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "flow/runtime/common/status.h"
#include "flow/runtime/common/time.h"
#include "flow/runtime/connectors/connector.h"
#include "flow/runtime/connectors/kafka_instance.h"

namespace flow::rt {

// Sets every key of `settings` on a new conf; kInvalidArgument naming a rejected key.
[[nodiscard]] Result<rd_kafka_conf_t*> MakeKafkaConf(
    const std::map<std::string, std::string>& settings, std::string_view what);

// A client of `type` with `settings` and no callbacks (helper clients: offsets readers, group
// looks); kInvalidArgument for a rejected setting, kUnavailable "<what>: cannot create ...".
[[nodiscard]] Result<rd_kafka_t*> MakeKafkaClient(
    rd_kafka_type_t type, const std::map<std::string, std::string>& settings,
    std::string_view what);

// How long a topic the broker calls unknown is asked for again before that counts as "does not
// exist" (a topic created a moment ago is unknown to a lagging metadata cache for a while).
constexpr int kKafkaNewTopicGraceMs = 3000;

// The number of partitions of `topic`: kUnavailable when the brokers cannot be reached within
// `timeout_ms`, kNotFound when the topic does not exist (still unknown after
// min(timeout_ms, kKafkaNewTopicGraceMs)).
[[nodiscard]] Result<int32_t> KafkaPartitionCount(rd_kafka_t* rk, const std::string& topic,
                                                  const std::string& brokers, int timeout_ms);

// Waits until the leader of every partition of `topic` answers a ListOffsets request. Metadata
// names a leader before that broker serves the partition; a produce in that gap fails with "not
// leader", and librdkafka 2.0.2's idempotent producer can then count the failed first batch as
// delivered when a later batch succeeds (records lost). kUnavailable after `timeout_ms`.
[[nodiscard]] Status KafkaWaitForLeaders(rd_kafka_t* rk, const std::string& topic,
                                         int32_t partitions, int timeout_ms);

// Maps a librdkafka error to a Status code: transport/timeouts -> kUnavailable, fencing ->
// kFenced, unknown topic -> kNotFound, everything else -> kIoError.
[[nodiscard]] Status KafkaError(rd_kafka_resp_err_t err, std::string message);

// True for errors that may go away by themselves (no leader yet, broker restarting, timeouts).
bool KafkaRetriable(rd_kafka_resp_err_t err);
// rd_kafka_committed of `list` on `rk`, retried while the error is retriable (a coordinator still
// loading, a pending transactional offset) until `timeout_ms` has passed; the last error.
rd_kafka_resp_err_t KafkaCommittedRetrying(rd_kafka_t* rk, rd_kafka_topic_partition_list_t* list,
                                           int64_t timeout_ms);

// Connection failures that retrying cannot cure, so waiting out a timeout only hides them: the
// broker refused the login (RD_KAFKA_RESP_ERR__AUTHENTICATION: wrong sasl.username/password or
// mechanism) or the client did not trust the broker's certificate (RD_KAFKA_RESP_ERR__SSL or, at
// the first report, __TRANSPORT, with "certificate verify failed" in the reason).
bool KafkaSecurityFailure(int err, std::string_view reason);

// rd_kafka_destroy of a closed group consumer. librdkafka before 2.3.0 aborts (a failed
// assertion) when it destroys a cooperative-sticky consumer that joined a group but got no
// assignment yet: its assignor state is still null (librdkafka issue 4312). Such a consumer
// (`had_assignment` false: no assign callback reached it) is kept instead of destroyed, closed and
// idle until the process exits; only a run that stops during its first rebalance has one.
void DestroyGroupConsumer(rd_kafka_t* rk, bool had_assignment);

// rd_kafka_destroy of a closed consumer, waited for at most kConsumerDestroyBoundMs. librdkafka
// since 2.0.0 (Debian 12 ships 2.0.2) can keep a partition reference after a broker outage and
// then wait for ever in rd_kafka_destroy (its issues 4486 and 4674; seen here as an instance that
// neither restarted nor stopped on SIGTERM once its cluster was gone). Past the bound the destroy
// is left to go on on its own thread (a closed consumer calls nothing of ours) and a warning names
// `what`.
constexpr int64_t kConsumerDestroyBoundMs = 10000;
void DestroyClosedConsumer(rd_kafka_t* rk, std::string_view what);

// kInvalidArgument (a configuration error: exit code 1, never restarted) naming `what`, the
// brokers, the failure, the settings to check and librdkafka's reason.
[[nodiscard]] Status KafkaSecurityStatus(std::string_view what, const std::string& brokers, int err,
                                         std::string_view reason);

// Keeps the first KafkaSecurityFailure a client reports. Thread-safe: librdkafka calls error
// callbacks on whichever thread serves the client's queue.
class KafkaSecurityWatch {
 public:
  // For rd_kafka_conf_set_error_cb, with the watch as the conf's opaque.
  static void OnError(rd_kafka_t* rk, int err, const char* reason, void* opaque);
  void Record(int err, const char* reason);
  // Ok, or KafkaSecurityStatus of the first failure recorded.
  [[nodiscard]] Status Failure(std::string_view what, const std::string& brokers) const;

 private:
  mutable std::mutex mu_;
  int err_ = 0;
  std::string reason_;
};

// Waits until `rk` gets a metadata answer from its brokers, in attempts of up to 250 ms; after
// each failed one `serve` runs the client's callbacks and `failure` says whether one of them
// recorded a security failure, which ends the wait at once. kUnavailable after `timeout_ms`.
[[nodiscard]] Status KafkaAwaitBrokers(rd_kafka_t* rk, const std::function<void()>& serve,
                                       const std::function<Status()>& failure,
                                       const std::string& brokers, int timeout_ms,
                                       std::string_view what);

// The groups a DescribeConsumerGroups result event describes, each member with the partitions of
// `topic` it holds ("" keeps none); empty when the event carries no result.
std::vector<KafkaGroupLook> KafkaGroupLooks(const rd_kafka_event_t* event, std::string_view topic);

// Headers for rd_kafka_producev (RD_KAFKA_V_HEADERS), or null when there are none. A successful
// produce takes ownership (call release()); after a failed one they are still the caller's.
struct KafkaHeadersDelete {
  void operator()(rd_kafka_headers_t* h) const { rd_kafka_headers_destroy(h); }
};
using KafkaHeaders = std::unique_ptr<rd_kafka_headers_t, KafkaHeadersDelete>;
KafkaHeaders MakeKafkaHeaders(std::span<const OutHeader> headers);

// Owners of an admin call's reply queue and result event.
struct KafkaQueueFree {
  void operator()(rd_kafka_queue_t* q) const { rd_kafka_queue_destroy(q); }
};
struct KafkaEventFree {
  void operator()(rd_kafka_event_t* e) const { rd_kafka_event_destroy(e); }
};
using KafkaQueuePtr = std::unique_ptr<rd_kafka_queue_t, KafkaQueueFree>;
using KafkaEventPtr = std::unique_ptr<rd_kafka_event_t, KafkaEventFree>;

// The request timeout of an admin call routed to a group's coordinator (DescribeConsumerGroups):
// librdkafka's maximum, so that in practice it never fires. librdkafka 2.0.2 aborts the process (a
// failed assertion `eonce->refcnt > 0`) when such a request times out before its client has found
// the coordinator and the client finds it afterwards. Wait with KafkaWaitAdmin's own timeout
// instead, and destroy the client when the wait gives up: that is safe at any point.
constexpr int kKafkaCoordinatorAdminTimeoutMs = 3600000;

// Waits for the result of an admin call on `queue` (its request timeout plus 1 s): kUnavailable
// "<what>: no answer within N ms" when none arrives, "<what>: <error>" when the call failed.
[[nodiscard]] Result<KafkaEventPtr> KafkaWaitAdmin(rd_kafka_queue_t* queue, int timeout_ms,
                                                   std::string_view what);

// The configuration of one resource (a topic by name, a broker by id) as DescribeConfigs reports
// it: name -> value (entries without a value are left out). kUnavailable naming `what` when no
// answer arrives within `timeout_ms` or the brokers refuse (e.g. not allowed to describe it).
[[nodiscard]] Result<std::map<std::string, std::string>> KafkaDescribeConfigs(
    rd_kafka_t* rk, rd_kafka_ResourceType_t type, const std::string& name, int timeout_ms,
    std::string_view what);

// The settings of `properties` that say how to connect (security.*, sasl.*, ssl.*): what helper
// clients (admin, progress reader) need of a connector's properties.
std::map<std::string, std::string> KafkaConnectionProperties(
    const std::map<std::string, std::string>& properties);

}  // namespace flow::rt
