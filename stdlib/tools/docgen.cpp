// flow_docgen: prints the Markdown reference of every stdlib function (docs/functions.md) to
// stdout. Usage: flow_docgen > docs/functions.md

#include <cstdio>
#include <string>

#include "stdlib/registry/registry.h"

int main(int argc, char** argv) {
  if (argc > 1) {
    std::fprintf(stderr, "usage: %s > docs/functions.md\n", argv[0]);
    return 2;
  }
  std::string md = flow::stdlib::FunctionsMarkdown();
  if (std::fwrite(md.data(), 1, md.size(), stdout) != md.size()) {
    std::fprintf(stderr, "flow_docgen: cannot write to stdout\n");
    return 1;
  }
  return 0;
}
