#include "flow/runtime/engine/timers.h"

#include <algorithm>

#include "flow/runtime/engine/operator.h"

namespace flow::rt {

class TaskTimers::Service final : public ProcessingTimeService {
 public:
  Service(TaskTimers* owner, uint32_t index) : owner_(owner), index_(index) {}
  TimestampMs Now() const override { return owner_->clock_->NowMs(); }
  void RegisterTimer(TimestampMs time) override { owner_->Register(index_, time); }
  Consumer* target = nullptr;

 private:
  TaskTimers* owner_;
  uint32_t index_;
};

TaskTimers::TaskTimers(Clock* clock) : clock_(clock) {}
TaskTimers::~TaskTimers() = default;

ProcessingTimeService* TaskTimers::NewService() {
  services_.push_back(std::make_unique<Service>(this, static_cast<uint32_t>(services_.size())));
  return services_.back().get();
}

void TaskTimers::Bind(ProcessingTimeService* service, Consumer* target) {
  static_cast<Service*>(service)->target = target;
}

Status TaskTimers::FireDue() {
  if (queue_.empty()) return Status::Ok();
  const TimestampMs now = clock_->NowMs();
  std::vector<uint32_t> due;
  while (!queue_.empty() && queue_.begin()->first <= now) {
    uint32_t owner = queue_.begin()->second;
    queue_.erase(queue_.begin());
    if (std::find(due.begin(), due.end(), owner) == due.end()) due.push_back(owner);
  }
  for (uint32_t owner : due) {
    Consumer* target = services_[owner]->target;
    if (target == nullptr) return Status::Internal("processing-time timer of an unbound operator");
    FLOW_RETURN_IF_ERROR(target->OnProcessingTime(now));
  }
  return Status::Ok();
}

}  // namespace flow::rt
