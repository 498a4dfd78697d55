#pragma once
// Secrets by reference: `${NAME}` in a setting is replaced by the environment variable NAME when
// the job starts ($$ is a literal $), so a password sits neither in a script, nor on a command
// line, nor in a log. Used by Kafka properties and schema registry credentials.

#include <functional>
#include <string>
#include <string_view>

#include "flow/runtime/common/status.h"

namespace flow::rt {

// `raw` with every ${NAME} replaced. kInvalidArgument "<what>: ..." for a malformed reference
// (NAME is letters, digits and '_') or an unset variable; the message never holds a value.
// `getenv` is for tests; default ::getenv.
[[nodiscard]] Result<std::string> ExpandEnvRefs(
    std::string_view raw, std::string_view what,
    const std::function<const char*(const char*)>& getenv = {});

}  // namespace flow::rt
