#include "flow/runtime/shuffle/repartition_topic.h"

#include <fmt/format.h>

namespace flow::rt::shuffle {
namespace {

constexpr std::string_view kPrefix = "__flow_repartition_";

bool TopicChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

}  // namespace

std::string RepartitionTopicPrefix(std::string_view job_id) {
  return fmt::format("{}{}.", kPrefix, job_id);
}

Result<std::string> RepartitionTopicName(std::string_view job_id, std::string_view op) {
  if (op.empty()) return Status::InvalidArgument("repartition topic: the operator has no name");
  for (char c : op) {
    if (!TopicChar(c)) {
      return Status::InvalidArgument(fmt::format(
          "operator `{}` cannot name a Kafka topic (only letters, digits, '.', '_' and '-'); "
          "rename the stream it belongs to",
          op));
    }
  }
  std::string name = RepartitionTopicPrefix(job_id) + std::string(op);
  if (name.size() > kMaxTopicName) {
    return Status::InvalidArgument(
        fmt::format("the repartition topic of operator `{}` would be {} characters long, Kafka "
                    "allows {}: use a shorter job id (--job-id) or stream name",
                    op, name.size(), kMaxTopicName));
  }
  return name;
}

Status ValidateRepartitionPartitions(int32_t partitions, uint32_t max_parallelism) {
  if (partitions < 1 || static_cast<uint32_t>(partitions) > max_parallelism) {
    return Status::InvalidArgument(
        fmt::format("repartition partitions must be between 1 and the max parallelism ({}), got {}",
                    max_parallelism, partitions));
  }
  return Status::Ok();
}

std::string EncodeRepartitionKey(uint64_t key_hash) {
  std::string key(kRepartitionKeyBytes, '\0');
  for (size_t i = 0; i < kRepartitionKeyBytes; ++i) {
    key[i] = static_cast<char>((key_hash >> (8 * i)) & 0xff);
  }
  return key;
}

Result<uint64_t> DecodeRepartitionKey(std::string_view key, std::string_view where) {
  if (key.size() != kRepartitionKeyBytes) {
    return Status::Corruption(fmt::format("{}: a repartitioned record's key has {} bytes, not {}",
                                          where, key.size(), kRepartitionKeyBytes));
  }
  uint64_t hash = 0;
  for (size_t i = 0; i < kRepartitionKeyBytes; ++i) {
    hash |= static_cast<uint64_t>(static_cast<unsigned char>(key[i])) << (8 * i);
  }
  return hash;
}

}  // namespace flow::rt::shuffle
