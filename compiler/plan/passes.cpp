#include "plan/passes.h"

namespace flow::plan {

const std::vector<PassInfo>& AllPasses() {
  static const std::vector<PassInfo> passes = {
      {"chain", "fuse consecutive stateless operators into one function", &FuseChains},
      {"project", "decode only the source fields the job reads", &ProjectSources},
  };
  return passes;
}

std::string RunPasses(Plan& plan, const std::set<std::string>& disabled) {
  std::string error = Verify(plan);
  if (!error.empty()) return "plan verification failed after lowering: " + error;
  for (const PassInfo& pass : AllPasses()) {
    if (disabled.count(pass.name)) continue;
    pass.run(plan);
    error = Verify(plan);
    if (!error.empty()) return std::string("plan verification failed after pass `") + pass.name + "`: " + error;
  }
  return "";
}

// A chain node whose only consumer is a chain node absorbs it: the consumer's steps are appended
// and the consumer's readers read the merged node instead.
void FuseChains(Plan& plan) {
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    auto* c = As<ChainNode>(plan.nodes[i].get());
    if (c == nullptr) continue;
    for (;;) {
      std::vector<int> consumers = plan.Consumers(c->id);
      if (consumers.size() != 1) break;
      auto* next = As<ChainNode>(plan.Get(consumers[0]));
      if (next == nullptr || next->inputs.size() != 1) break;
      c->steps.insert(c->steps.end(), next->steps.begin(), next->steps.end());
      c->output = next->output;
      c->range.end = next->range.end;
      for (int reader : plan.Consumers(next->id)) {
        for (int& in : plan.Get(reader)->inputs) {
          if (in == next->id) in = c->id;
        }
      }
      plan.nodes[static_cast<size_t>(next->id)].reset();
    }
  }
}

}  // namespace flow::plan
