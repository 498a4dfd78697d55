#pragma once
// Job ids: what names a job's state directory, its Kafka transactional id ("flow-<id>") and its
// progress records (docs/exactly-once.md, "Job identity").

#include <string>
#include <string_view>

namespace flow::rt {

// 1 to 200 characters of [A-Za-z0-9._-] (what a Kafka transactional id and a file name take).
bool IsValidJobId(std::string_view id);
// A valid id made from a name (a script's or program's file name, directories dropped): other
// characters become '_', cut to 200; "job" when nothing is left.
std::string JobIdFromName(std::string_view name);

}  // namespace flow::rt
