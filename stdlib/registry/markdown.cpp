// docs/functions.md is generated from the registry so the docs cannot drift from what the checker
// accepts; tests/stdlib checks the committed file is up to date.

#include <map>

#include "stdlib/registry/registry.h"

namespace flow::stdlib {

std::string FunctionsMarkdown() {
  std::string md;
  md += "# Functions and aggregates\n\n";
  md +=
      "<!-- Generated from stdlib/registry by flow_docgen; do not edit. Regenerate with:\n"
      "     cmake --build build --target flow_docgen && build/bin/flow_docgen > docs/functions.md "
      "-->\n\n";
  md +=
      "Type patterns: `numeric` is int or float; `comparable` is a number, string, timestamp, "
      "duration or bool; `T` is one type shared by every parameter and result that names it "
      "(int and float unify to float), and `T:numeric` / `T:comparable` restrict it; `any` is any "
      "type. A result ending in `?` may be null. Unless a function says otherwise, a null argument "
      "gives a null result. Aggregates skip null values.\n";

  // Categories in first-appearance order of the registry.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const FunctionSpec*>> by_category;
  for (const FunctionSpec& fn : AllFunctions()) {
    auto& list = by_category[fn.category];
    if (list.empty()) order.push_back(fn.category);
    list.push_back(&fn);
  }
  for (const std::string& category : order) {
    // Appended piecewise: `"literal" + std::string&&` trips a g++ 12 -Wrestrict false positive.
    md += "\n## ";
    md += category;
    md += "\n";
    for (const FunctionSpec* fn : by_category[category]) {
      md += "\n### `";
      md += fn->name;
      md += "`\n\n`";
      md += Signature(*fn);
      md += "`\n\n";
      md += fn->summary;
      md += "\n";
      if (!fn->nullable_in_propagates && fn->kind == FunctionKind::kScalar) {
        md += "Null arguments do not make the result null by themselves.\n";
      }
      md += "\nExample: `";
      md += fn->example;
      md += "`\n";
    }
  }
  return md;
}

}  // namespace flow::stdlib
