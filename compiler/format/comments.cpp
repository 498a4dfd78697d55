#include "format/comments.h"

namespace flow::format {

bool BlankLineBefore(std::string_view source, uint32_t offset) {
  int breaks = 0;
  for (size_t i = std::min<size_t>(offset, source.size()); i-- > 0;) {
    char c = source[i];
    if (c == '\n') {
      ++breaks;
    } else if (c != ' ' && c != '\t' && c != '\r') {
      break;
    }
  }
  return breaks >= 2;
}

std::vector<Comment> ScanComments(std::string_view source) {
  std::vector<Comment> out;
  const size_t n = source.size();
  size_t i = 0;
  while (i < n) {
    char c = source[i];
    if (c == '"') {  // a string: skip it, escapes included
      for (++i; i < n && source[i] != '"' && source[i] != '\n'; ++i) {
        if (source[i] == '\\' && i + 1 < n) ++i;
      }
      ++i;
      continue;
    }
    if (c != '/' || i + 1 >= n || (source[i + 1] != '/' && source[i + 1] != '*')) {
      ++i;
      continue;
    }
    Comment k;
    k.begin = static_cast<uint32_t>(i);
    k.block = source[i + 1] == '*';
    size_t end;
    if (k.block) {
      size_t close = source.find("*/", i + 2);
      end = close == std::string_view::npos ? n : close + 2;
    } else {
      end = source.find('\n', i);
      if (end == std::string_view::npos) end = n;
    }
    k.end = static_cast<uint32_t>(end);
    k.text = std::string(source.substr(i, end - i));
    if (!k.block) {
      while (!k.text.empty() &&
             (k.text.back() == ' ' || k.text.back() == '\t' || k.text.back() == '\r'))
        k.text.pop_back();
    }
    size_t line_start = i;
    while (line_start > 0 && source[line_start - 1] != '\n') --line_start;
    k.own_line = source.substr(line_start, i - line_start).find_first_not_of(" \t\r") ==
                 std::string_view::npos;
    if (k.block) {
      size_t next = source.find_first_not_of(" \t\r", end);
      // A block comment after it counts: the pair must stay together, wherever the first goes.
      k.code_after =
          next != std::string_view::npos && source[next] != '\n' && source.substr(next, 2) != "//";
    }
    k.blank_before = BlankLineBefore(source, k.begin);
    out.push_back(std::move(k));
    i = end;
  }
  return out;
}

}  // namespace flow::format
