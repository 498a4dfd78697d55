#pragma once
// Small librdkafka helpers of the txn area: configuration, admin calls, the progress record.

#include <librdkafka/rdkafka.h>

#include <map>
#include <string>
#include <string_view>

#include "../connectors/kafka_common.h"
#include "flow/runtime/common/status.h"

namespace flow::rt::txn_detail {

// A client with `settings`; kInvalidArgument naming a rejected setting. With a `watch`, the
// client's error callback records security failures in it (served by rd_kafka_poll).
[[nodiscard]] Result<rd_kafka_t*> MakeClient(rd_kafka_type_t type,
                                             const std::map<std::string, std::string>& settings,
                                             std::string_view what,
                                             KafkaSecurityWatch* watch = nullptr);

// The broker's transaction.max.timeout.ms (asks the first broker in the metadata).
[[nodiscard]] Result<int64_t> BrokerMaxTransactionTimeout(rd_kafka_t* rk, const std::string& brokers,
                                                          int timeout_ms);

// Creates `topic` (1 partition, compacted) unless it exists.
[[nodiscard]] Status EnsureProgressTopic(rd_kafka_t* rk, const std::string& topic,
                                         int replication_factor, int timeout_ms);

// Progress record value: "FLPG" u32 version, job id, checkpoint id, participants, CRC-32C.
std::string EncodeProgress(const std::string& job_id, int64_t checkpoint_id, uint32_t participants);
[[nodiscard]] Status DecodeProgress(std::string_view bytes, std::string* job_id, int64_t* checkpoint_id,
                                    uint32_t* participants);

}  // namespace flow::rt::txn_detail
