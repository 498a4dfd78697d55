#pragma once
// Internal to the registry: a small builder for FunctionSpec entries and the per-category tables.

#include <string>
#include <utility>
#include <vector>

#include "stdlib/registry/registry.h"

namespace flow::stdlib::internal {

// Builds one FunctionSpec; min_args counts the parameters declared with Param (not Optional).
class Def {
 public:
  Def(std::string name, FunctionKind kind, std::string category) {
    spec_.name = std::move(name);
    spec_.kind = kind;
    spec_.category = std::move(category);
  }
  Def& Param(std::string name, std::string type) {
    spec_.params.push_back({std::move(name), std::move(type)});
    spec_.min_args = spec_.params.size();
    return *this;
  }
  Def& Optional(std::string name, std::string type) {
    spec_.params.push_back({std::move(name), std::move(type)});
    return *this;
  }
  Def& Variadic() {
    spec_.variadic = true;
    return *this;
  }
  Def& Returns(std::string pattern) {
    spec_.returns = std::move(pattern);
    return *this;
  }
  Def& Cpp(std::string call) {
    spec_.cpp = std::move(call);
    return *this;
  }
  Def& Summary(std::string text) {
    spec_.summary = std::move(text);
    return *this;
  }
  Def& Example(std::string text) {
    spec_.example = std::move(text);
    return *this;
  }
  Def& NoNullPropagation() {
    spec_.nullable_in_propagates = false;
    return *this;
  }
  Def& EventTime() {
    spec_.needs_event_time = true;
    return *this;
  }
  const FunctionSpec& spec() const { return spec_; }

 private:
  FunctionSpec spec_;
};

void AddStringFunctions(std::vector<FunctionSpec>* out);
void AddMathFunctions(std::vector<FunctionSpec>* out);
void AddTimeFunctions(std::vector<FunctionSpec>* out);
void AddConditionalFunctions(std::vector<FunctionSpec>* out);
void AddAggregates(std::vector<FunctionSpec>* out);

// Units accepted by date_trunc, in the order the docs list them.
const std::vector<std::string>& DateTruncUnits();

}  // namespace flow::stdlib::internal
