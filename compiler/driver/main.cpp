// flowc: the Flow compiler driver.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "flow/version.h"

int main(int argc, char** argv) {
  CLI::App app{"flowc - the Flow streaming dataflow compiler"};
  app.set_version_flag("--version", std::string("flowc ") + flow::kVersion);
  app.require_subcommand(0, 1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 exits 0 for --help/--version and non-zero for usage errors; usage errors are exit 2.
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  fmt::print("{}", app.help());
  return 0;
}
