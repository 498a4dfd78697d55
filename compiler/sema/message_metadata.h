#pragma once
// Kafka message metadata as fields of records, on both ends (docs/language.md, "Message metadata").
//
// Source: `metadata: ["key=user", "timestamp=kafka_ts", "partition=p", "offset=o",
// "header:trace-id=trace"]` names schema fields that the message fills instead of the payload.
// Types: key and headers string or bytes (nullable: null when absent), timestamp a timestamp,
// partition and offset int.
//
// Sink: `metadata: ["key=k", "timestamp=ts", "header:trace-id=trace"]` names fields of the
// records written that become the message's key, timestamp and headers instead of payload fields
// (a null one: no key, the record's event time, no such header). Partition and offset are the
// broker's to choose on a sink.
//
// The checker validates the entries (Checker::CheckMetadata, check_metadata.cpp); the code
// generator reads them with MessageMetadataOf.

#include <string>
#include <string_view>
#include <vector>

#include "ast/expr.h"
#include "ast/pipeline.h"

namespace flow::sema {

struct MessageMetadata {
  enum class What { kKey, kTimestamp, kPartition, kOffset, kHeader };
  What what = What::kKey;
  std::string header;  // kHeader: the header's name
  std::string field;   // the field it fills (source) or is taken from (sink)
};

// Parses one entry of a source's (sink = false) or sink's `metadata:`; on failure returns a
// message ("`metadata` entry \"x\": want ...").
std::string ParseMessageMetadata(std::string_view entry, bool sink, MessageMetadata* out);
// The well-formed entries of a connector's `metadata:` argument (string literals only).
std::vector<MessageMetadata> MessageMetadataOf(const ast::ConnectorCall& connector, bool sink);
// True when one of `metadata` names `field`.
bool IsMetadataField(const std::vector<MessageMetadata>& metadata, const std::string& field);

}  // namespace flow::sema
