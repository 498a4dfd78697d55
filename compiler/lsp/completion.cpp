// textDocument/completion. The context is read from the text before the cursor (the document is
// usually incomplete while typing); names and record types come from the latest analysis that
// had a program, so completion keeps working while the current text has a syntax error.
//   after `|`                         pipeline operators
//   after `from` / `into` / `dead_letter`  source / sink connectors
//   after `format`                    formats
//   after `(` or `,` in a connector's or format's arguments: its argument names
//   after `union` / `join`            streams
//   after `name.`                     the fields of stream `name` (join qualifiers)
//   in a type (param, schema field, extern fn, cast ... as)  types and schemas
//   elsewhere                         fields of the record at the cursor, params, functions and
//                                     aggregates with their signatures, extern fns, streams,
//                                     schemas, keywords
#include <optional>
#include <set>

#include "lsp/features.h"
#include "sema/connectors.h"

namespace flow::lsp {
namespace {

// CompletionItemKind values from the protocol.
constexpr int kItemField = 5, kItemProperty = 10, kItemFunction = 3, kItemModule = 9,
              kItemKeyword = 14, kItemConstant = 21, kItemStruct = 22, kItemTypeParameter = 25;

// Above this many bytes before the cursor, completion does not re-analyse a repaired prefix.
constexpr size_t kMaxRepairBytes = size_t{256} << 10;

// Every keyword of the grammar, and `late`: not a grammar keyword but a word the parser checks
// after a window's `on`.
constexpr const char* kKeywords[] = {
    "param",  "schema",   "stream",     "extern",    "fn",           "from",
    "format", "as",       "event",      "time",      "watermark",    "idle",
    "on",     "error",    "fail",       "skip",      "dead_letter",  "where",
    "key",    "by",       "window",     "tumbling",  "sliding",      "session",
    "every",  "lateness", "processing", "aggregate", "select",       "explode",
    "union",  "join",     "within",     "into",      "exactly_once", "at_least_once",
    "and",    "or",       "not",        "in",        "is",           "null",
    "true",   "false",    "case",       "when",      "then",         "else",
    "end",    "cast",     "timestamp",  "zone",      "late",
};
constexpr const char* kOperators[] = {"where",   "key by", "window", "aggregate", "select",
                                      "explode", "union",  "join",   "into"};
constexpr const char* kTypes[] = {"bool",  "int",       "float",    "string",
                                  "bytes", "timestamp", "duration", "list"};

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

class Builder {
 public:
  void Add(const std::string& label, int kind, const std::string& detail = "",
           const std::string& doc = "", const std::string& sort_group = "5") {
    if (!seen_.insert(label).second) return;
    Json item = Json::MakeObject();
    item.Set("label", label);
    item.Set("kind", kind);
    if (!detail.empty()) item.Set("detail", detail);
    if (!doc.empty()) {
      Json d = Json::MakeObject();
      d.Set("kind", "markdown");
      d.Set("value", doc);
      item.Set("documentation", std::move(d));
    }
    item.Set("sortText", sort_group + label);
    items_.Push(std::move(item));
  }
  Json Finish() {
    Json list = Json::MakeObject();
    list.Set("isIncomplete", false);
    list.Set("items", std::move(items_));
    return list;
  }

 private:
  std::set<std::string> seen_;
  Json items_ = Json::MakeArray();
};

void AddFields(Builder& b, const types::Type& record) {
  if (record.kind() != types::Kind::kRecord) return;
  std::string owner = record.record_name().empty() ? "" : " (" + record.record_name() + ")";
  for (const types::Field& f : record.fields())
    b.Add(f.name, kItemField, f.type.ToString() + owner, "", "1");
}

// Streams a pipeline at `offset` may read: defined before it (a later one is a
// use-before-definition error) and not the one being defined there (a cycle).
void AddStreams(Builder& b, const sema::CheckedProgram* p, size_t offset) {
  if (!p) return;
  for (const auto& [name, info] : p->streams) {
    if (info.decl && info.decl->range.begin >= offset) continue;
    if (info.decl && offset <= info.decl->range.end) continue;
    b.Add(name, kItemModule, "stream",
          info.record.is_error() ? "" : "```flow\n" + RecordText(info.record) + "\n```", "3");
  }
}

void AddSchemas(Builder& b, const sema::CheckedProgram* p) {
  if (!p) return;
  for (const auto& [name, decl] : p->schemas) {
    b.Add(name, kItemStruct, "schema", "```flow\nschema " + RecordText(decl->resolved) + "\n```",
          "3");
  }
}

void AddParams(Builder& b, const sema::CheckedProgram* p, std::optional<types::Kind> only) {
  if (!p) return;
  for (const auto& [name, decl] : p->params) {
    if (only && decl->resolved.kind() != *only) continue;
    b.Add(name, kItemConstant, "param: " + decl->resolved.ToString(), "", "2");
  }
}

void AddFunctions(Builder& b, const sema::CheckedProgram* p) {
  for (const stdlib::FunctionSpec& fn : stdlib::AllFunctions()) {
    std::string doc = fn.summary;
    if (!fn.example.empty()) doc += "\n\nExample: `" + fn.example + "`";
    b.Add(fn.name, kItemFunction, stdlib::Signature(fn), doc, "4");
  }
  if (!p) return;
  for (const auto& [name, decl] : p->externs) {
    std::string sig = "extern fn " + name + "(";
    for (size_t i = 0; i < decl->params.size(); ++i) {
      sig += (i ? ", " : "") + decl->params[i].name.name + ": " +
             (i < decl->param_types.size() ? decl->param_types[i].ToString() : "");
    }
    b.Add(name, kItemFunction, sig + ") -> " + decl->return_type.ToString(), "", "4");
  }
}

// The word just before `pos` (skipping spaces), and the character before that word's start.
std::string WordBefore(std::string_view text, size_t pos) {
  size_t end = pos;
  while (end > 0 && (text[end - 1] == ' ' || text[end - 1] == '\t' || text[end - 1] == '\n' ||
                     text[end - 1] == '\r')) {
    --end;
  }
  size_t begin = end;
  while (begin > 0 && IsWordChar(text[begin - 1])) --begin;
  return std::string(text.substr(begin, end - begin));
}

// True when the cursor is where a type is written: after `param x:`, inside `schema X { ... }`
// after a field's `:`, inside an extern fn's parameter list or after its `->`, after `cast(... as`.
bool InTypePosition(std::string_view text, size_t word_start, char prev,
                    const std::string& prev_word) {
  if (prev == '<') return true;  // list<
  if (prev_word == "as") {
    // `cast(x as T)`: an unclosed `cast(` on the way back; else `as` names a schema or an alias.
    int depth = 0;
    for (size_t i = word_start; i-- > 0;) {
      if (text[i] == ')') ++depth;
      if (text[i] == '(') {
        if (depth == 0) return i >= 4 && text.substr(i - 4, 4) == "cast";
        --depth;
      }
      if (text[i] == '\n' && depth == 0 && i + 1 < text.size() && text[i + 1] != ' ') break;
    }
    return false;
  }
  if (prev == '>') {  // `-> T` of an extern fn
    size_t q = text.find_last_not_of(" \t\r\n", word_start == 0 ? 0 : word_start - 1);
    return q != std::string_view::npos && q >= 1 && text[q - 1] == '-';
  }
  if (prev != ':') return false;
  // The statement that owns this `:` starts on the nearest line above that is not indented.
  size_t stmt = 0;
  for (size_t i = word_start;;) {
    size_t nl = i == 0 ? std::string_view::npos : text.rfind('\n', i - 1);
    size_t ls = nl == std::string_view::npos ? 0 : nl + 1;
    char c = ls < text.size() ? text[ls] : '\n';
    if (c != ' ' && c != '\t' && c != '}' && c != '\n' && c != '\r') {
      stmt = ls;
      break;
    }
    if (ls == 0) break;
    i = ls - 1;
  }
  std::string_view head = text.substr(stmt, word_start - stmt);
  if (head.rfind("param", 0) == 0) {
    return head.find('=') == std::string_view::npos;
  }
  if (head.rfind("schema", 0) == 0) {
    return head.rfind('{') != std::string_view::npos && head.rfind('}') == std::string_view::npos;
  }
  if (head.rfind("extern", 0) == 0) return true;
  return false;
}

// The connector or format whose argument list the cursor is in (`kafka(topic: "t", |`), found
// from the innermost unclosed `(` before `pos`; null when the cursor is not in one.
const std::vector<sema::ArgSpec>* ArgumentsAt(std::string_view text, size_t pos) {
  int depth = 0;
  size_t open = std::string_view::npos;
  // Argument lists are short; a bounded scan keeps a pathological line cheap.
  size_t stop = pos > 4096 ? pos - 4096 : 0;
  for (size_t i = pos; i-- > stop;) {
    if (text[i] == ')') {
      ++depth;
    } else if (text[i] == '(') {
      if (depth == 0) {
        open = i;
        break;
      }
      --depth;
    }
  }
  if (open == std::string_view::npos) return nullptr;
  size_t end = open;
  while (end > 0 && (text[end - 1] == ' ' || text[end - 1] == '\t')) --end;
  size_t begin = end;
  while (begin > 0 && IsWordChar(text[begin - 1])) --begin;
  std::string callee(text.substr(begin, end - begin));
  std::string keyword = WordBefore(text, begin);
  if (keyword == "from" || keyword == "into" || keyword == "dead_letter") {
    const sema::ConnectorSpec* c = sema::FindConnector(callee, keyword == "from");
    return c ? &c->args : nullptr;
  }
  if (keyword == "format") {
    const sema::FormatSpec* f = sema::FindFormat(callee);
    return f ? &f->args : nullptr;
  }
  return nullptr;
}

}  // namespace

Json Completion(const Document& doc, Position pos) {
  Builder b;
  LineIndex lines(doc.text);
  size_t offset = lines.ToOffset(pos);
  std::string_view text = doc.text;
  size_t word_start = offset;
  while (word_start > 0 && IsWordChar(text[word_start - 1])) --word_start;
  size_t p = word_start;
  while (p > 0 &&
         (text[p - 1] == ' ' || text[p - 1] == '\t' || text[p - 1] == '\r' || text[p - 1] == '\n'))
    --p;
  char prev = p > 0 ? text[p - 1] : '\0';
  std::string prev_word = WordBefore(text, word_start);

  // The whole text's program, else the last one that parsed (it still has the statement being
  // typed), else the one of the statements without syntax errors.
  const sema::CheckedProgram* program = doc.analysis && doc.analysis->complete()
                                            ? doc.analysis->program.get()
                                        : doc.last_good ? doc.last_good->program.get()
                                        : doc.analysis  ? doc.analysis->program.get()
                                                        : nullptr;

  if (prev == '|' && !(p >= 2 && text[p - 2] == '|')) {
    for (const char* op : kOperators) b.Add(op, kItemKeyword, "pipeline step", "", "1");
    return b.Finish();
  }
  if (prev == '.') {
    std::string qualifier = WordBefore(text, p - 1);
    if (program) {
      auto it = program->streams.find(qualifier);
      if (it != program->streams.end()) AddFields(b, it->second.record);
    }
    return b.Finish();
  }
  if (prev == '(' || prev == ',') {
    if (const std::vector<sema::ArgSpec>* args = ArgumentsAt(text, p)) {
      for (const sema::ArgSpec& a : *args) {
        std::string detail = a.type.ToString() + (a.required ? ", required" : ", optional");
        std::string doc;
        for (const std::string& choice : a.choices)
          doc += (doc.empty() ? "one of: `" : "`, `") + choice;
        if (!doc.empty()) doc += "`";
        b.Add(a.name, kItemProperty, detail, doc, a.required ? "0" : "1");
      }
      return b.Finish();
    }
  }
  if (prev_word == "from" || prev_word == "into" || prev_word == "dead_letter") {
    bool source = prev_word == "from";
    for (const sema::ConnectorSpec& c : sema::AllConnectors()) {
      if (c.source != source) continue;
      if (prev_word == "dead_letter" && !c.dead_letter) continue;  // the checker refuses it
      std::string args;
      for (const sema::ArgSpec& a : c.args) {
        args += (args.empty() ? "" : ", ") + a.name + (a.required ? "" : "?") + ": " +
                a.type.ToString();
      }
      b.Add(c.name, kItemModule, (source ? "source(" : "sink(") + args + ")",
            c.example.empty() ? "" : "Example: `" + c.example + "`", "1");
    }
    return b.Finish();
  }
  if (prev_word == "format") {
    for (const sema::FormatSpec& f : sema::AllFormats())
      b.Add(f.name, kItemKeyword, "format", "", "1");
    return b.Finish();
  }
  if (prev_word == "union" || prev_word == "join") {
    AddStreams(b, program, offset);
    return b.Finish();
  }
  if (InTypePosition(text, word_start, prev, prev_word)) {
    for (const char* t : kTypes) b.Add(t, kItemTypeParameter, "type", "", "1");
    AddSchemas(b, program);
    return b.Finish();
  }
  if (prev_word == "as") {  // `as Schema` on a source, or a new alias: offer the schemas
    AddSchemas(b, program);
    return b.Finish();
  }
  if (prev_word == "tumbling" || prev_word == "sliding" || prev_word == "session" ||
      prev_word == "every" || prev_word == "watermark" || prev_word == "within" ||
      prev_word == "lateness" || prev_word == "idle") {
    AddParams(b, program, types::Kind::kDuration);
    return b.Finish();
  }
  if (prev_word == "zone") {
    AddParams(b, program, types::Kind::kString);
    return b.Finish();
  }

  // The record at the cursor. While the text does not parse, first try the text up to the last
  // `|` before the cursor (dropping the step being typed); its offsets are those of the current
  // text. Else the last analysis that parsed, whose offsets match up to the first edit (usually
  // near the cursor).
  const Analysis* fields_from =
      doc.analysis && doc.analysis->complete() ? doc.analysis.get() : nullptr;
  std::shared_ptr<const Analysis> repaired;
  if (fields_from == nullptr) {
    size_t bar = word_start == 0 ? std::string_view::npos : text.rfind('|', word_start - 1);
    if (bar != std::string_view::npos && bar <= kMaxRepairBytes) {
      repaired = Analyze(doc.path, std::string(text.substr(0, bar)));
      if (repaired->complete()) fields_from = repaired.get();
    }
  }
  if (fields_from == nullptr && doc.last_good) fields_from = doc.last_good.get();
  if (fields_from == nullptr && doc.analysis && doc.analysis->program)
    fields_from = doc.analysis.get();
  if (fields_from)
    AddFields(b, RecordAt(*fields_from->program, static_cast<uint32_t>(offset), text));
  AddParams(b, program, std::nullopt);
  AddFunctions(b, program);
  AddStreams(b, program, offset);
  AddSchemas(b, program);
  for (const char* k : kKeywords) b.Add(k, kItemKeyword, "keyword", "", "6");
  return b.Finish();
}

}  // namespace flow::lsp
