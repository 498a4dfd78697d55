// `flowc build FILE -o BINARY`: script -> checked program -> plan -> C++ -> native binary.
#include "driver/build_command.h"

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "codegen/codegen.h"
#include "codegen/compile.h"
#include "codegen/portable.h"
#include "codegen/toolchain.h"
#include "driver/commands.h"
#include "frontend/frontend.h"
#include "plan/passes.h"

namespace flow::driver {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kHelp =
    "Usage: flowc build FILE -o BINARY [options]\n"
    "\n"
    "Checks FILE, generates C++ for it and compiles it against the Flow runtime into BINARY.\n"
    "\n"
    "Options:\n"
    "  -o, --output BINARY   the binary to write (required)\n"
    "  --portable            make BINARY a directory that runs on another Linux with\n"
    "                        nothing installed: BINARY/NAME (NAME: its last path\n"
    "                        part) starts the job with the libraries in BINARY/lib\n"
    "  --debug               compile with -O0 -g instead of -O2\n"
    "  --no-pass NAME        switch off a plan pass (fold-constants, push-filters,\n"
    "                        chain, project, prune-join); repeatable\n"
    "  --keep-cpp DIR        keep the generated C++ (and the compiler log) in DIR\n"
    "  --no-cache            do not use the precompiled-header cache\n"
    "  -j, --jobs N          compile the job as up to N translation units in parallel\n"
    "                        (default: the number of CPUs; 1: one unit)\n"
    "  --verbose             say whether the header cache was used, rebuilt or off, and\n"
    "                        how many units were compiled\n"
    "\n"
    "The precompiled runtime headers are cached under ${XDG_CACHE_HOME:-~/.cache}/flow/.\n"
    "Exit codes: 0 built, 1 the script has errors or the build failed, 2 usage error.\n";

bool TakeValue(const std::vector<std::string>& args, size_t* i, std::string* value) {
  const std::string& a = args[*i];
  size_t eq = a.find('=');
  if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
    *value = a.substr(eq + 1);
    return true;
  }
  if (*i + 1 >= args.size()) return false;
  *value = args[++*i];
  return true;
}

bool Is(const std::string& arg, const std::string& name) {
  return arg == name || arg.rfind(name + "=", 0) == 0;
}

// The .flow line a compiler failure points at: the first error line itself ("job.flow:12:5:
// error: ..."), else the last mention of the script before it (an error in an extern fn header
// reads "In file included from job.flow:3:"). "" when none.
std::string FlowLineOf(const std::string& log, const std::string& first_error,
                       const std::string& flow_path) {
  auto line_in = [&](const std::string& text) -> std::string {
    std::string found;
    for (const std::string& name : {flow_path, fs::path(flow_path).filename().string()}) {
      size_t at = text.rfind(name + ":");
      if (at == std::string::npos) continue;
      size_t start = at + name.size() + 1;
      size_t end = start;
      while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
      if (end > start) return text.substr(start, end - start);
    }
    return found;
  };
  std::string direct = line_in(first_error);
  if (!direct.empty()) return direct;
  size_t upto = log.find(first_error);
  return line_in(log.substr(0, upto == std::string::npos ? log.size() : upto));
}

int Run(const std::vector<std::string>& args) {
  std::string file, output, keep_dir;
  bool debug = false, use_cache = true, verbose = false, portable = false;
  int jobs = 0;
  std::set<std::string> disabled;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-o" || Is(a, "--output")) {
      if (!TakeValue(args, &i, &output)) return UsageError("`-o` needs a file name", "build");
    } else if (a == "--debug") {
      debug = true;
    } else if (a == "--verbose") {
      verbose = true;
    } else if (a == "--portable") {
      portable = true;
    } else if (a == "--no-cache") {
      use_cache = false;
    } else if (a == "-j" || Is(a, "--jobs") || (a.rfind("-j", 0) == 0 && a.size() > 2)) {
      std::string n;
      if (a.rfind("-j", 0) == 0 && a.size() > 2) {
        n = a.substr(2);
      } else if (!TakeValue(args, &i, &n)) {
        return UsageError("`--jobs` needs a number", "build");
      }
      char* end = nullptr;
      errno = 0;
      long v = std::strtol(n.c_str(), &end, 10);
      if (n.empty() || *end != '\0' || errno != 0 || v < 1 || v > 256)
        return UsageError("`--jobs` needs a number from 1 to 256, not `" + n + "`", "build");
      jobs = static_cast<int>(v);
    } else if (Is(a, "--no-pass")) {
      std::string name;
      if (!TakeValue(args, &i, &name)) return UsageError("`--no-pass` needs a pass name", "build");
      bool known = false;
      for (const plan::PassInfo& p : plan::AllPasses()) known = known || name == p.name;
      if (!known)
        return UsageError("unknown pass `" + name +
                              "`; passes are fold-constants, push-filters, chain and project",
                          "build");
      disabled.insert(name);
    } else if (Is(a, "--keep-cpp")) {
      if (!TakeValue(args, &i, &keep_dir))
        return UsageError("`--keep-cpp` needs a directory", "build");
    } else if (!a.empty() && a[0] == '-') {
      return UsageError("unknown option `" + a + "` for `build`", "build");
    } else if (file.empty()) {
      file = a;
    } else {
      return UsageError("`build` takes one file", "build");
    }
  }
  if (file.empty()) return UsageError("`build` needs a file", "build");
  if (output.empty()) return UsageError("`build` needs `-o BINARY`", "build");
  // --portable: the binary goes into OUTPUT/lib; OUTPUT/NAME starts it (codegen/portable.h).
  std::error_code ec;
  const std::string name = fs::path(output).filename().string();
  std::string binary = output;
  if (portable) {
    if (fs::exists(output, ec) && !fs::is_directory(output, ec)) {
      std::fprintf(stderr, "flowc: error: --portable writes a directory, and `%s` is a file\n",
                   output.c_str());
      return 1;
    }
    fs::create_directories(fs::path(output) / "lib", ec);
    if (ec) {
      std::fprintf(stderr, "flowc: error: cannot create `%s/lib`: %s\n", output.c_str(),
                   ec.message().c_str());
      return 1;
    }
    binary = (fs::path(output) / "lib" / (name + ".bin")).string();
  }

  std::string cpp_name = fs::path(output).filename().string() + ".cpp";
  GeneratedJob job = GenerateJob(file, disabled, cpp_name);
  if (job.exit_code != 0) return job.exit_code;

  // The generated file goes to --keep-cpp DIR, or a private temporary directory that is removed
  // after a successful build (and kept, with the compiler log, after a failed one).
  fs::path dir;
  bool temporary = keep_dir.empty();
  if (temporary) {
    std::string tmpl = (fs::temp_directory_path(ec) / "flowc-build-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
      std::fprintf(stderr, "flowc: error: cannot create a temporary directory in %s\n",
                   fs::temp_directory_path(ec).c_str());
      return 1;
    }
    dir = tmpl;
  } else {
    dir = keep_dir;
    fs::create_directories(dir, ec);
    if (ec) {
      std::fprintf(stderr, "flowc: error: cannot create `%s`: %s\n", keep_dir.c_str(),
                   ec.message().c_str());
      return 1;
    }
  }
  fs::path cpp = dir / cpp_name;
  {
    std::ofstream out(cpp, std::ios::binary);
    out << job.cpp;
    if (!out) {
      std::fprintf(stderr, "flowc: error: cannot write `%s`\n", cpp.c_str());
      return 1;
    }
  }
  codegen::CompileOptions options;
  options.debug = debug;
  options.use_cache = use_cache;
  options.parts = job.parts;
  options.jobs = jobs;
  codegen::CompileResult r =
      codegen::CompileJob(cpp.string(), fs::absolute(binary, ec).string(), options);
  if (verbose) {
    const char* state = r.cache_hit ? "hit" : r.cache_rebuilt ? "rebuilt" : "off";
    std::fprintf(stderr, "flowc: runtime header cache: %s %s\n", state, r.cache_entry.c_str());
    std::fprintf(stderr, "flowc: compiled %d translation unit%s\n", r.units,
                 r.units == 1 ? "" : "s");
  }
  if (!r.ok) return ReportCompileFailure(file, job, r, cpp.string());
  if (temporary) fs::remove_all(dir, ec);
  if (portable) {
    codegen::PortableResult p = codegen::MakePortable(output, name, codegen::BuiltToolchain().cxx);
    if (!p.ok) {
      std::fprintf(stderr, "flowc: error: --portable: %s\n", p.error.c_str());
      return 1;
    }
    if (verbose)
      std::fprintf(stderr, "flowc: --portable: %d shared libraries in %s/lib\n", p.libraries,
                   output.c_str());
  }
  return 0;
}

}  // namespace

int ReportCompileFailure(const std::string& file, const GeneratedJob& job,
                         const codegen::CompileResult& r, const std::string& cpp) {
  const std::string log = cpp + ".log";
  std::ofstream(log, std::ios::binary) << r.log;
  std::string line = FlowLineOf(r.log, r.first_error, job.flow_path);
  std::fprintf(stderr, "flowc: internal error: the generated C++ for %s does not compile",
               file.c_str());
  if (!line.empty()) std::fprintf(stderr, " (at %s line %s)", file.c_str(), line.c_str());
  std::fprintf(stderr, "\n  %s\n", r.first_error.c_str());
  std::fprintf(stderr, "  generated C++: %s\n  full compiler output: %s\n", cpp.c_str(),
               log.c_str());
  std::fprintf(stderr, "  (if the script uses `extern fn`, check the C++ header it names)\n");
  return 1;
}

GeneratedJob GenerateJob(const std::string& path, const std::set<std::string>& disabled_passes,
                         const std::string& cpp_name) {
  GeneratedJob job;
  std::error_code ec;
  job.flow_path = fs::absolute(path, ec).lexically_normal().string();
  frontend::Options options;
  options.disabled_passes = disabled_passes;
  options.generate.flow_file = job.flow_path;
  options.generate.cpp_file = cpp_name;
  options.generate.script_dir = fs::path(job.flow_path).parent_path().string();
  diag::SourceManager sm;
  diag::DiagnosticEngine diags;
  frontend::Compilation c = frontend::CompileFile(path, sm, diags, options);
  PrintDiagnostics(diags, sm);
  if (!c.internal_error.empty()) PrintInternalError(c.internal_error);
  if (!c.ok(frontend::Stage::kGenerate)) {
    job.exit_code = 1;
    return job;
  }
  job.cpp = std::move(c.cpp);
  job.parts = std::move(c.parts);
  return job;
}

const Command kBuildCommand = {"build", "compile a script into a native binary", kHelp, &Run};

}  // namespace flow::driver
