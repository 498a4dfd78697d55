#pragma once
// Internal helpers of the checkpoint area (not installed).

#include <string>
#include <string_view>

#include "flow/runtime/common/status.h"

namespace flow::rt::checkpoint_fs {
// WriteFileDurably with the during-snapshot-write fault point between the two halves.
[[nodiscard]] Status WriteFileDurably(const std::string& path, std::string_view bytes,
                                      bool snapshot_fault_point);
}  // namespace flow::rt::checkpoint_fs
