// `flowc emit-cpp FILE -o DIR`: writes the generated C++ and a CMakeLists.txt that builds it.
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "codegen/codegen.h"
#include "driver/build_command.h"
#include "driver/commands.h"
#include "plan/passes.h"

namespace flow::driver {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kHelp =
    "Usage: flowc emit-cpp FILE -o DIR [--no-pass NAME]\n"
    "\n"
    "Writes DIR/<name>.cpp (the generated job) and DIR/CMakeLists.txt, which builds it against "
    "the\n"
    "Flow runtime of this flowc:  cmake -S DIR -B DIR/build && cmake --build DIR/build\n"
    "\n"
    "Exit codes: 0 written, 1 the script has errors, 2 usage error.\n";

int Run(const std::vector<std::string>& args) {
  std::string file, dir;
  std::set<std::string> disabled;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-o" || a == "--output") {
      if (i + 1 >= args.size()) return UsageError("`-o` needs a directory", "emit-cpp");
      dir = args[++i];
    } else if (a == "--no-pass") {
      if (i + 1 >= args.size()) return UsageError("`--no-pass` needs a pass name", "emit-cpp");
      std::string name = args[++i];
      bool known = false;
      for (const plan::PassInfo& p : plan::AllPasses()) known = known || name == p.name;
      if (!known)
        return UsageError("unknown pass `" + name +
                              "`; passes are fold-constants, push-filters, chain and project",
                          "emit-cpp");
      disabled.insert(name);
    } else if (!a.empty() && a[0] == '-') {
      return UsageError("unknown option `" + a + "` for `emit-cpp`", "emit-cpp");
    } else if (file.empty()) {
      file = a;
    } else {
      return UsageError("`emit-cpp` takes one file", "emit-cpp");
    }
  }
  if (file.empty()) return UsageError("`emit-cpp` needs a file", "emit-cpp");
  if (dir.empty()) return UsageError("`emit-cpp` needs `-o DIR`", "emit-cpp");
  std::string stem = fs::path(file).stem().string();
  std::string name;
  for (char c : stem)
    name.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_');
  if (name.empty()) name = "job";
  GeneratedJob job = GenerateJob(file, disabled, name + ".cpp");
  if (job.exit_code != 0) return job.exit_code;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    std::fprintf(stderr, "flowc: error: cannot create `%s`: %s\n", dir.c_str(),
                 ec.message().c_str());
    return 1;
  }
  std::ofstream cpp(fs::path(dir) / (name + ".cpp"), std::ios::binary);
  cpp << job.cpp;
  std::ofstream cmake(fs::path(dir) / "CMakeLists.txt", std::ios::binary);
  cmake << codegen::EmitCMakeLists(name + ".cpp", name);
  if (!cpp || !cmake) {
    std::fprintf(stderr, "flowc: error: cannot write into `%s`\n", dir.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

const Command kEmitCppCommand = {"emit-cpp", "write the generated C++ and a CMakeLists.txt", kHelp,
                                 &Run};

}  // namespace flow::driver
