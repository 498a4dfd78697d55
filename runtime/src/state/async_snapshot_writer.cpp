#include <exception>

#include "flow/runtime/state/state_snapshot.h"

namespace flow::rt {

AsyncSnapshotWriter::AsyncSnapshotWriter() : thread_([this] { Loop(); }) {}

AsyncSnapshotWriter::~AsyncSnapshotWriter() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void AsyncSnapshotWriter::Submit(std::unique_ptr<PendingSnapshot> snapshot, SnapshotFileSink* sink,
                                 Done done) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(Job{std::move(snapshot), sink, std::move(done)});
  }
  cv_.notify_all();
}

void AsyncSnapshotWriter::Drain() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return queue_.empty() && running_ == 0; });
}

size_t AsyncSnapshotWriter::pending() const {
  std::lock_guard lock(mu_);
  return queue_.size() + running_;
}

void AsyncSnapshotWriter::Loop() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing left
    Job job = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    lock.unlock();
    Result<std::vector<StoredFile>> result = Status::Internal("snapshot writer: no result");
    try {
      result = job.snapshot->Write(job.sink);
    } catch (const std::exception& e) {
      result = Status::Internal(std::string("snapshot writer: exception: ") + e.what());
    }
    job.snapshot.reset();
    if (job.done) job.done(std::move(result));
    lock.lock();
    --running_;
    cv_.notify_all();
  }
}

}  // namespace flow::rt
