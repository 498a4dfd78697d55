#pragma once
// Named plan passes, run in order; each is followed by Verify. A pass can be switched off by name
// (`flowc build --no-pass chain`). Passes:
//   chain    fuse consecutive stateless nodes (where/select/explode) into one chain node
//   project  decode only the source fields the job reads
// Reserved names for later passes: filter-pushdown, fold-constants.

#include <set>
#include <string>
#include <vector>

#include "plan/plan.h"

namespace flow::plan {

struct PassInfo {
  const char* name;
  const char* summary;
  void (*run)(Plan& plan);
};

const std::vector<PassInfo>& AllPasses();

// Runs every pass not in `disabled`, verifying after lowering and after each pass. Returns "" or
// an internal error: "plan verification failed after pass `chain`: ...".
std::string RunPasses(Plan& plan, const std::set<std::string>& disabled);

// The passes. Exposed for tests.
void FuseChains(Plan& plan);
void ProjectSources(Plan& plan);

}  // namespace flow::plan
