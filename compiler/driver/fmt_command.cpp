// `flowc fmt [--check] PATH...`: rewrites scripts in the canonical layout (flow::format).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "driver/commands.h"
#include "format/format.h"

namespace flow::driver {
namespace {

constexpr std::string_view kHelp =
    "Usage: flowc fmt [options] PATH...\n"
    "\n"
    "Rewrites each script in the canonical layout (see docs/compiler.md). A PATH may be a .flow\n"
    "file, a directory (every *.flow file below it, recursively, skipping hidden directories) or\n"
    "`-` (read stdin, write the formatted script to stdout). Files are only written when their "
    "layout changes. A script with\n"
    "syntax errors is never rewritten: its errors are printed as `flowc check` prints them.\n"
    "\n"
    "Options:\n"
    "  --check          write nothing; list the files whose layout would change, each with a\n"
    "                   short diff of the first changes, on stdout\n"
    "  --indent N       spaces per indentation level (default 2)\n"
    "  --max-width N    line width to stay within where the layout can break (default 100)\n"
    "\n"
    "Exit codes: 0 every script is (now) formatted; 1 with --check some script would change, or\n"
    "a script has syntax errors or cannot be read or written; 2 usage error.\n";

constexpr size_t kMaxHunks = 3;       // --check shows at most this many hunks per file
constexpr size_t kMaxHunkLines = 12;  // and at most this many -/+ lines per hunk

bool ReadAll(std::istream& in, std::string* out) {
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return !in.bad();
}

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

// A short unified-style diff of `before` -> `after`: an LCS over the changed middle of the two
// texts (capped in size; beyond the cap the whole middle is shown as one replaced block).
std::string DiffHint(std::string_view before, std::string_view after) {
  std::vector<std::string_view> a = SplitLines(before), b = SplitLines(after);
  size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix + prefix < a.size() && suffix + prefix < b.size() &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix])
    ++suffix;
  size_t n = a.size() - prefix - suffix, m = b.size() - prefix - suffix;
  // Edit script over the middle: ' ' keep, '-' delete from a, '+' insert from b.
  std::vector<std::pair<char, std::string_view>> edits;
  if (n * m <= 4'000'000) {
    std::vector<std::vector<uint32_t>> lcs(n + 1, std::vector<uint32_t>(m + 1, 0));
    for (size_t i = n; i-- > 0;)
      for (size_t j = m; j-- > 0;)
        lcs[i][j] = a[prefix + i] == b[prefix + j] ? lcs[i + 1][j + 1] + 1
                                                   : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    size_t i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[prefix + i] == b[prefix + j]) {
        edits.emplace_back(' ', a[prefix + i]);
        ++i, ++j;
      } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
        edits.emplace_back('-', a[prefix + i++]);
      } else {
        edits.emplace_back('+', b[prefix + j++]);
      }
    }
  } else {
    for (size_t i = 0; i < n; ++i) edits.emplace_back('-', a[prefix + i]);
    for (size_t j = 0; j < m; ++j) edits.emplace_back('+', b[prefix + j]);
  }
  std::string out;
  size_t hunks = 0, line_a = prefix;  // 0-based line in `before` of edits[k]
  for (size_t k = 0; k < edits.size();) {
    if (edits[k].first == ' ') {
      ++line_a;
      ++k;
      continue;
    }
    if (hunks == kMaxHunks) {
      out += "  ...\n";
      break;
    }
    ++hunks;
    out += "  @@ line " + std::to_string(line_a + 1) + " @@\n";
    size_t shown = 0, hidden = 0;
    for (; k < edits.size() && edits[k].first != ' '; ++k) {
      if (edits[k].first == '-') ++line_a;
      if (shown == kMaxHunkLines) {
        ++hidden;
        continue;
      }
      ++shown;
      out += "  ";
      out += edits[k].first;
      out += edits[k].second;
      out += '\n';
    }
    if (hidden > 0) out += "  ... " + std::to_string(hidden) + " more changed lines\n";
  }
  if (before.size() > 0 && before.back() != '\n' && hunks == 0)
    out += "  (adds the final newline)\n";
  return out;
}

// Every *.flow file below `dir`, sorted so output is stable.
bool CollectDir(const std::string& dir, std::vector<std::string>* files) {
  std::error_code ec;
  std::vector<std::string> found;
  auto it = std::filesystem::recursive_directory_iterator(
      dir, std::filesystem::directory_options::skip_permission_denied, ec);
  for (; !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    bool hidden = name.size() > 1 && name[0] == '.';
    if (it->is_directory(ec)) {
      if (hidden) it.disable_recursion_pending();  // .git and the like
    } else if (!hidden && it->is_regular_file(ec) && it->path().extension() == ".flow") {
      found.push_back(it->path().string());
    }
  }
  if (ec) {
    std::fprintf(stderr, "flowc: error: cannot list `%s`: %s\n", dir.c_str(), ec.message().c_str());
    return false;
  }
  std::sort(found.begin(), found.end());
  files->insert(files->end(), found.begin(), found.end());
  return true;
}

// Replaces `path` by `text` through a temporary file in the same directory, keeping its mode. A
// symbolic link is followed: its target is rewritten and the link stays.
bool WriteInPlace(const std::string& given, const std::string& text) {
  std::error_code ec;
  std::string path = given;
  if (std::filesystem::is_symlink(given, ec)) {
    std::filesystem::path target = std::filesystem::canonical(given, ec);
    if (!ec) path = target.string();
  }
  struct stat st;
  mode_t mode = ::stat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0644;
  std::string tmp = path + ".fmt-tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) {
      std::fprintf(stderr, "flowc: error: cannot write `%s`: %s\n", tmp.c_str(),
                   std::strerror(errno));
      std::remove(tmp.c_str());
      return false;
    }
  }
  ::chmod(tmp.c_str(), mode);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::fprintf(stderr, "flowc: error: cannot replace `%s`: %s\n", path.c_str(),
                 std::strerror(errno));
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

bool ParseCount(const std::string& value, int lo, int hi, int* out) {
  if (value.empty() || value.size() > 4 ||
      value.find_first_not_of("0123456789") != std::string::npos)
    return false;
  int n = std::stoi(value);
  if (n < lo || n > hi) return false;
  *out = n;
  return true;
}

int Run(const std::vector<std::string>& args) {
  bool check = false, only_paths = false;
  format::FormatOptions options;
  std::vector<std::string> paths;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const std::string& name, std::string* v) {
      if (a.rfind(name + "=", 0) == 0) {
        *v = a.substr(name.size() + 1);
        return true;
      }
      if (i + 1 >= args.size()) return false;
      *v = args[++i];
      return true;
    };
    std::string v;
    if (only_paths || a.empty() || a[0] != '-' || a == "-") {
      paths.push_back(a);
    } else if (a == "--") {
      only_paths = true;
    } else if (a == "--check") {
      check = true;
    } else if (a == "--indent" || a.rfind("--indent=", 0) == 0) {
      if (!value("--indent", &v) || !ParseCount(v, 1, 8, &options.indent))
        return UsageError("`--indent` needs a number from 1 to 8", "fmt");
    } else if (a == "--max-width" || a.rfind("--max-width=", 0) == 0) {
      if (!value("--max-width", &v) || !ParseCount(v, 40, 1000, &options.max_width))
        return UsageError("`--max-width` needs a number from 40 to 1000", "fmt");
    } else {
      return UsageError("unknown option `" + a + "` for `fmt`", "fmt");
    }
  }
  if (paths.empty()) return UsageError("`fmt` needs at least one file, directory or `-`", "fmt");
  if (std::count(paths.begin(), paths.end(), "-") > 1)
    return UsageError("`-` (stdin) may be given only once", "fmt");

  std::vector<std::string> files;
  bool failed = false;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (p != "-" && std::filesystem::is_directory(p, ec)) {
      if (!CollectDir(p, &files)) failed = true;
    } else {
      files.push_back(p);
    }
  }

  size_t changed = 0, errors = 0;
  for (const std::string& path : files) {
    std::string text;
    bool is_stdin = path == "-";
    const std::string name = is_stdin ? "<stdin>" : path;
    if (is_stdin) {
      if (!ReadAll(std::cin, &text)) {
        std::fprintf(stderr, "flowc: error: cannot read stdin\n");
        ++errors;
        continue;
      }
    } else {
      std::ifstream in(path, std::ios::binary);
      if (!in || !ReadAll(in, &text)) {
        std::fprintf(stderr, "flowc: error: cannot read `%s`: %s\n", path.c_str(),
                     std::strerror(errno));
        ++errors;
        continue;
      }
    }
    format::FormatResult r = format::FormatSource(name, text, options);
    if (!r.ok) {
      std::fputs(r.diagnostics.c_str(), stderr);
      std::fprintf(stderr, "flowc: `%s` has syntax errors; not formatted\n", name.c_str());
      ++errors;
      continue;
    }
    bool differs = r.text != text;
    if (check) {
      if (differs) {
        ++changed;
        std::printf("%s: would be reformatted\n%s", name.c_str(), DiffHint(text, r.text).c_str());
      }
    } else if (is_stdin) {
      std::fwrite(r.text.data(), 1, r.text.size(), stdout);
    } else if (differs) {
      if (!WriteInPlace(path, r.text)) {
        ++errors;
        continue;
      }
      ++changed;
      std::fprintf(stderr, "formatted %s\n", path.c_str());
    }
  }
  std::fflush(stdout);
  if (check && changed > 0)
    std::fprintf(stderr, "flowc: %zu of %zu file%s would be reformatted\n", changed, files.size(),
                 files.size() == 1 ? "" : "s");
  if (failed || errors > 0) return 1;
  return check && changed > 0 ? 1 : 0;
}

}  // namespace

const Command kFmtCommand = {"fmt", "rewrite scripts in the canonical layout (--check for CI)",
                             kHelp, &Run};

}  // namespace flow::driver
