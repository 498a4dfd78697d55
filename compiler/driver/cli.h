#pragma once
// flowc's command line: `flowc <command> [options] [files]`. Returns the process exit code
// (0 ok, 1 the script has errors, 2 usage error), see docs/architecture.md.

namespace flow::driver {

int RunCli(int argc, char** argv);

}  // namespace flow::driver
