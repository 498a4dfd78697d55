#pragma once
// Kafka message metadata as fields of a source's records: `metadata: ["key=user",
// "timestamp=kafka_ts", "partition=p", "offset=o", "header:trace-id=trace"]` on a kafka source.
// Each named field of the schema is filled from the message instead of the payload (the format
// does not look for it). Types: key and headers string or bytes (nullable: null when absent),
// timestamp a timestamp, partition and offset int. The checker validates the entries
// (CheckSourceMetadata in connectors.cpp); the code generator reads them with SourceMetadataOf.

#include <string>
#include <string_view>
#include <vector>

#include "ast/expr.h"
#include "ast/pipeline.h"

namespace flow::sema {

struct SourceMetadata {
  enum class What { kKey, kTimestamp, kPartition, kOffset, kHeader };
  What what = What::kKey;
  std::string header;  // kHeader: the header's name
  std::string field;   // the schema field it fills
};

// Parses one entry; on failure returns a message ("`metadata` entry \"x\": want ...").
std::string ParseSourceMetadata(std::string_view entry, SourceMetadata* out);
// The well-formed entries of `source`'s `metadata:` argument (string literals only).
std::vector<SourceMetadata> SourceMetadataOf(const ast::Source& source);

}  // namespace flow::sema
