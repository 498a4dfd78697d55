#include "flow/runtime/exec/ops.h"

#include <string>

namespace flow::exec::ops {
namespace {

// One pending error per subtask thread; only the first is kept (it names the cause).
struct Pending {
  bool set = false;
  std::string message;
};
thread_local Pending pending;

}  // namespace

void Fail(const char* where, const char* what) {
  if (pending.set) return;
  pending.set = true;
  pending.message.assign(where).append(": ").append(what);
}

bool HasError() {
  return pending.set;
}

rt::Status TakeError() {
  if (!pending.set) return rt::Status::Ok();
  pending.set = false;
  return rt::Status::InvalidArgument(std::move(pending.message));
}

}  // namespace flow::exec::ops
