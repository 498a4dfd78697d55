#pragma once
// Writes all of `data` to `fd`, retrying short writes and EINTR. kIoError naming `what` on failure.

#include <string_view>

#include "flow/runtime/common/status.h"

namespace flow::rt {

[[nodiscard]] Status WriteAll(int fd, std::string_view data, std::string_view what);

}  // namespace flow::rt
