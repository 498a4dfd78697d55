#include "codegen/portable.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "codegen/compile.h"

namespace flow::codegen {
namespace fs = std::filesystem;
namespace {

// The launcher (C, linked statically): NAME and LOADER are defined on the command line. It uses
// no library but libc, so it starts where nothing is installed.
constexpr const char* kLauncher = R"(#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  char dir[PATH_MAX];
  const char* self = argc > 0 ? argv[0] : NAME;
  ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
  if (n > 0) {
    dir[n] = '\0';
  } else if (strchr(self, '/') != NULL && strlen(self) < sizeof dir) {
    strcpy(dir, self); /* no /proc (an empty chroot): the path it was started by */
  } else {
    fprintf(stderr, "%s: cannot find the directory of this program: /proc is not mounted; start it "
            "by a path that contains a '/'\n", self);
    return 127;
  }
  char* slash = strrchr(dir, '/');
  if (slash == dir) slash[1] = '\0'; else *slash = '\0';
  char loader[PATH_MAX], libs[PATH_MAX], job[PATH_MAX];
  if (snprintf(loader, sizeof loader, "%s/lib/%s", dir, LOADER) >= (int)sizeof loader ||
      snprintf(libs, sizeof libs, "%s/lib", dir) >= (int)sizeof libs ||
      snprintf(job, sizeof job, "%s/lib/%s.bin", dir, NAME) >= (int)sizeof job) {
    fprintf(stderr, "%s: the path of its directory is too long\n", self);
    return 127;
  }
  char** args = calloc((size_t)argc + 8, sizeof *args);
  if (args == NULL) return 127;
  int i = 0;
  args[i++] = loader;
  args[i++] = "--inhibit-cache";
  args[i++] = "--library-path";
  args[i++] = libs;
  args[i++] = "--argv0";
  args[i++] = (char*)self;
  args[i++] = job;
  for (int a = 1; a < argc; ++a) args[i++] = argv[a];
  args[i] = NULL;
  execv(loader, args);
  fprintf(stderr, "%s: cannot start %s: %s\n", self, loader, strerror(errno));
  return 127;
}
)";

bool ValidName(const std::string& name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

struct Library {
  std::string name;  // the name the job asks for (soname), or the loader's file name
  std::string path;  // where it is on this machine
  bool loader = false;
};

// ldd's lines: "\tlibz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x...)",
// "\t/lib64/ld-linux-x86-64.so.2 (0x...)", "\tlinux-vdso.so.1 (0x...)", "\tlibx.so => not found".
bool ParseLdd(const std::string& text, std::vector<Library>* out, std::string* error) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos) continue;
    line = line.substr(start);
    const size_t arrow = line.find(" => ");
    if (arrow != std::string::npos) {
      Library lib;
      lib.name = line.substr(0, arrow);
      std::string rest = line.substr(arrow + 4);
      if (rest.rfind("not found", 0) == 0) {
        *error = "the job needs " + lib.name + ", which is not found on this machine";
        return false;
      }
      lib.path = rest.substr(0, rest.find(" ("));
      if (lib.path.empty() || lib.path[0] != '/') continue;  // vdso-like entries
      out->push_back(lib);
      continue;
    }
    if (line[0] == '/') {  // the dynamic loader
      Library lib;
      lib.path = line.substr(0, line.find(" ("));
      lib.name = fs::path(lib.path).filename().string();
      lib.loader = true;
      out->push_back(lib);
    }
  }
  return true;
}

}  // namespace

PortableResult MakePortable(const std::string& dir, const std::string& name,
                            const std::string& cxx) {
  PortableResult r;
  if (!ValidName(name)) {
    r.error = "the job's name `" + name + "` must be letters, digits, '.', '_' or '-'";
    return r;
  }
  const fs::path lib_dir = fs::path(dir) / "lib";
  const fs::path job = lib_dir / (name + ".bin");
  std::string ldd_out;
  if (RunProcess({"ldd", job.string()}, &ldd_out) != 0) {
    r.error = "`ldd " + job.string() + "` failed: " + ldd_out;
    return r;
  }
  std::vector<Library> libs;
  if (!ParseLdd(ldd_out, &libs, &r.error)) return r;
  std::string loader;
  for (const Library& lib : libs) {
    if (lib.loader) loader = lib.name;
    std::error_code ec;
    // The file itself, under the name the job asks for (symlinks resolved).
    const fs::path from = fs::canonical(lib.path, ec);
    if (!ec) fs::copy_file(from, lib_dir / lib.name, fs::copy_options::overwrite_existing, ec);
    if (ec) {
      r.error = "cannot copy " + lib.path + " into " + lib_dir.string() + ": " + ec.message();
      return r;
    }
    ++r.libraries;
  }
  if (loader.empty() || !ValidName(loader)) {
    r.error = "ldd names no usable dynamic loader for " + job.string() + ":\n" + ldd_out;
    return r;
  }
  const fs::path source = lib_dir / "launcher.c";
  {
    std::ofstream out(source, std::ios::binary);
    out << kLauncher;
    if (!out) {
      r.error = "cannot write " + source.string();
      return r;
    }
  }
  // Both names were checked to be plain file names: no quoting issue in the macro values.
  std::string log;
  const int rc = RunProcess(
      {cxx, "-x", "c", "-std=gnu11", "-O2", "-static", "-DNAME=\"" + name + "\"",
       "-DLOADER=\"" + loader + "\"", "-o", (fs::path(dir) / name).string(), source.string()},
      &log);
  std::error_code ec;
  fs::remove(source, ec);
  if (rc != 0) {
    r.error = "cannot build the static launcher (is libc6-dev installed?):\n" + log;
    return r;
  }
  r.ok = true;
  return r;
}

}  // namespace flow::codegen
