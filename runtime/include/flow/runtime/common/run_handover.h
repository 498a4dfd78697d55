#pragma once
// RunHandover: what one run of a job hands to the next run of the same process, when the engine
// restarts it at once (partitions moved between instances, docs/deploy.md).
//
// A connector that closes at the end of a run may Keep something costly to make again, under a
// name only it knows; the same connector of the next run Takes it when it opens. What no run took
// is dropped when the engine decides that no run follows at once (the job ends, or it waits before
// a restart after a failure), with whether the job is stopping cleanly. The engine knows nothing of
// what is kept. Kept objects are Dropped at most once, and destroyed without Drop after a Take.
//
// Why: a Kafka consumer-group member that left and rejoined at every in-process restart moved the
// partitions of the other instances, which restarted in turn and rejoined, and so on (a rebalance
// ping-pong that could last for ever). Kept, it restarts without the group noticing.
// Threading: thread-safe.

#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace flow::rt {

class RunHandover {
 public:
  class Kept {
   public:
    virtual ~Kept() = default;
    // No run took it. `stopping`: the job ends cleanly (a stop), so what it holds outside the
    // process goes at once; otherwise a failure, and a later run may want it back soon.
    virtual void Drop(bool stopping) = 0;
  };

  RunHandover() = default;
  RunHandover(const RunHandover&) = delete;
  RunHandover& operator=(const RunHandover&) = delete;
  ~RunHandover() { DropAll(/*stopping=*/false); }

  // Replaces (dropping) anything kept under `name` before.
  void Keep(const std::string& name, std::shared_ptr<Kept> kept);
  // What was kept under `name`, now the caller's; null when nothing was.
  std::shared_ptr<Kept> Take(const std::string& name);
  // Drops everything kept (in name order).
  void DropAll(bool stopping);
  // How many objects are kept now.
  size_t size() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Kept>> kept_;
};

}  // namespace flow::rt
