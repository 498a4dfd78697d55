#include "lsp/server.h"

#include <unistd.h>

#include <cstdio>
#include <exception>

#include "flow/version.h"
#include "frontend/frontend.h"
#include "lsp/features.h"

namespace flow::lsp {
namespace {

void Log(const std::string& message) {
  std::fprintf(stderr, "flowc lsp: %s\n", message.c_str());
}

// A {line, character} object as a Position; false when malformed.
bool ReadPositionObject(const Json& j, Position* out) {
  auto line = j.GetInt("line");
  auto character = j.GetInt("character");
  if (!line || !character || *line < 0 || *character < 0 || *line > UINT32_MAX ||
      *character > UINT32_MAX) {
    return false;
  }
  out->line = static_cast<uint32_t>(*line);
  out->character = static_cast<uint32_t>(*character);
  return true;
}

// params.position as a Position; false when missing or malformed.
bool ReadPosition(const Json& params, Position* out) {
  const Json* pos = params.GetObject("position");
  return pos != nullptr && ReadPositionObject(*pos, out);
}

bool ReadRange(const Json& j, Range* out) {
  const Json* start = j.GetObject("start");
  const Json* end = j.GetObject("end");
  return start && end && ReadPositionObject(*start, &out->start) &&
         ReadPositionObject(*end, &out->end);
}

Json Capabilities() {
  Json sync = Json::MakeObject();
  sync.Set("openClose", true);
  sync.Set("change", 2);  // incremental
  Json completion = Json::MakeObject();
  Json triggers = Json::MakeArray();
  for (const char* t : {"|", ".", ":"}) triggers.Push(t);
  completion.Set("triggerCharacters", std::move(triggers));
  completion.Set("resolveProvider", false);
  Json caps = Json::MakeObject();
  caps.Set("positionEncoding", "utf-16");
  caps.Set("textDocumentSync", std::move(sync));
  caps.Set("hoverProvider", true);
  caps.Set("definitionProvider", true);
  caps.Set("completionProvider", std::move(completion));
  caps.Set("documentFormattingProvider", true);
  caps.Set("documentSymbolProvider", true);
  caps.Set("referencesProvider", true);
  caps.Set("codeActionProvider", true);
  Json signature = Json::MakeObject();
  Json signature_triggers = Json::MakeArray();
  for (const char* t : {"(", ","}) signature_triggers.Push(t);
  signature.Set("triggerCharacters", std::move(signature_triggers));
  caps.Set("signatureHelpProvider", std::move(signature));
  caps.Set("documentHighlightProvider", true);
  Json rename = Json::MakeObject();
  rename.Set("prepareProvider", true);
  caps.Set("renameProvider", std::move(rename));
  Json legend = Json::MakeObject();
  Json token_types = Json::MakeArray();
  for (const std::string& t : SemanticTokenTypes()) token_types.Push(t);
  Json token_modifiers = Json::MakeArray();
  token_modifiers.Push("declaration");
  legend.Set("tokenTypes", std::move(token_types));
  legend.Set("tokenModifiers", std::move(token_modifiers));
  Json tokens = Json::MakeObject();
  tokens.Set("legend", std::move(legend));
  tokens.Set("full", true);
  caps.Set("semanticTokensProvider", std::move(tokens));
  return caps;
}

}  // namespace

void Server::Reply(const Json& id, Json result) {
  Json msg = Json::MakeObject();
  msg.Set("jsonrpc", "2.0");
  msg.Set("id", id);
  msg.Set("result", std::move(result));
  if (!transport_.Write(WriteJson(msg))) exit_ = true;
}

void Server::ReplyError(const Json& id, int code, const std::string& message) {
  Json error = Json::MakeObject();
  error.Set("code", code);
  error.Set("message", message);
  Json msg = Json::MakeObject();
  msg.Set("jsonrpc", "2.0");
  msg.Set("id", id);
  msg.Set("error", std::move(error));
  if (!transport_.Write(WriteJson(msg))) exit_ = true;
}

void Server::Notify(const std::string& method, Json params) {
  Json msg = Json::MakeObject();
  msg.Set("jsonrpc", "2.0");
  msg.Set("method", method);
  msg.Set("params", std::move(params));
  if (!transport_.Write(WriteJson(msg))) exit_ = true;
}

int Server::Run() {
  while (!exit_) {
    if (!transport_.HasPendingInput()) AnalyzeStale();
    ReadResult r = transport_.Read();
    switch (r.status) {
      case ReadStatus::kEof:
        Log("input closed");
        return shutdown_ ? 0 : 1;
      case ReadStatus::kBadHeader:
        Log("bad message header: " + r.reason);
        ReplyError(Json(), kParseError, "bad message header: " + r.reason);
        break;
      case ReadStatus::kTooLarge:
        Log(r.reason);
        ReplyError(Json(), kInvalidRequest, r.reason);
        break;
      case ReadStatus::kOk:
        // The front end reports problems as diagnostics; an exception here is our own bug or an
        // allocation failure. Either way the session survives it.
        try {
          HandleMessage(r.body);
        } catch (const std::exception& e) {
          Log(std::string("internal error: ") + e.what());
          ReplyError(Json(), kInternalError, std::string("internal error: ") + e.what());
        }
        break;
    }
  }
  return shutdown_ ? 0 : 1;
}

void Server::HandleMessage(const std::string& body) {
  JsonParseResult parsed = ParseJson(body);
  if (!parsed.value) {
    Log("malformed JSON " + parsed.error);
    ReplyError(Json(), kParseError, "malformed JSON " + parsed.error);
    return;
  }
  const Json& msg = *parsed.value;
  if (!msg.is_object()) {
    ReplyError(Json(), kInvalidRequest,
               "a message must be a JSON object (batches are not used by LSP)");
    return;
  }
  const Json* id = msg.Get("id");
  if (id && !id->is_string() && !id->is_int() && !id->is_null()) {
    ReplyError(Json(), kInvalidRequest, "`id` must be a string or an integer");
    return;
  }
  const std::string* method = msg.GetString("method");
  if (method == nullptr) {
    if (id && (msg.Get("result") || msg.Get("error"))) return;  // a response to us: none expected
    ReplyError(id ? *id : Json(), kInvalidRequest, "a request needs a string `method`");
    return;
  }
  const Json* params = msg.Get("params");
  Json empty = Json::MakeObject();
  if (params && !params->is_object() && !params->is_array()) {
    if (id) ReplyError(*id, kInvalidRequest, "`params` must be an object or an array");
    return;
  }
  const Json& p = params && params->is_object() ? *params : empty;
  if (id) {
    HandleRequest(*id, *method, p);
  } else {
    HandleNotification(*method, p);
  }
}

void Server::HandleRequest(const Json& id, const std::string& method, const Json& params) {
  if (method == "initialize") {
    if (initialized_) {
      ReplyError(id, kInvalidRequest, "`initialize` was already received");
      return;
    }
    initialized_ = true;
    // Hover text is Markdown unless the client lists only other formats.
    if (const Json* caps = params.GetObject("capabilities")) {
      const Json* text_doc = caps->GetObject("textDocument");
      const Json* hover = text_doc ? text_doc->GetObject("hover") : nullptr;
      const Json* formats = hover ? hover->GetArray("contentFormat") : nullptr;
      if (formats && !formats->as_array().empty()) {
        markdown_ = false;
        for (const Json& f : formats->as_array())
          markdown_ |= f.is_string() && f.as_string() == "markdown";
      }
    }
    Json info = Json::MakeObject();
    info.Set("name", "flowc");
    info.Set("version", flow::kVersion);
    Json result = Json::MakeObject();
    result.Set("capabilities", Capabilities());
    result.Set("serverInfo", std::move(info));
    Reply(id, std::move(result));
    return;
  }
  if (!initialized_) {
    ReplyError(id, kServerNotInitialized, "`" + method + "` before `initialize`");
    return;
  }
  if (shutdown_) {
    ReplyError(id, kInvalidRequest, "`" + method + "` after `shutdown`");
    return;
  }
  if (method == "shutdown") {
    shutdown_ = true;
    Reply(id, Json());
    return;
  }
  Error error{0, ""};
  Json result = DocumentRequest(method, params, &error);
  if (error.code != 0) {
    ReplyError(id, error.code, error.message);
  } else {
    Reply(id, std::move(result));
  }
}

Json Server::DocumentRequest(const std::string& method, const Json& params, Error* error) {
  bool known = method == "textDocument/hover" || method == "textDocument/definition" ||
               method == "textDocument/completion" || method == "textDocument/formatting" ||
               method == "textDocument/documentSymbol" || method == "textDocument/references" ||
               method == "textDocument/documentHighlight" ||
               method == "textDocument/signatureHelp" || method == "textDocument/codeAction" ||
               method == "textDocument/prepareRename" || method == "textDocument/rename" ||
               method == "textDocument/semanticTokens/full";
  if (!known) {
    *error = {kMethodNotFound, "unknown method `" + method + "`"};
    return Json();
  }
  Document* doc = FindDocument(params, error);
  if (doc == nullptr) return Json();
  if (doc->stale) Reanalyze(*doc);
  if (method == "textDocument/documentSymbol") return DocumentSymbols(*doc);
  if (method == "textDocument/semanticTokens/full") return SemanticTokens(*doc);
  if (method == "textDocument/formatting") {
    int tab_size = 2;
    if (const Json* options = params.GetObject("options")) {
      auto t = options->GetInt("tabSize");
      if (t && *t >= 1 && *t <= 16) tab_size = static_cast<int>(*t);
    }
    std::string message;
    std::optional<Json> edits = Formatting(*doc, tab_size, &message);
    if (!edits) {
      *error = {kRequestFailed, message};
      return Json();
    }
    return std::move(*edits);
  }
  if (method == "textDocument/codeAction") {
    Range range;
    const Json* r = params.GetObject("range");
    if (r == nullptr || !ReadRange(*r, &range)) {
      *error = {kInvalidParams, "`textDocument/codeAction` needs `range` {start, end}"};
      return Json();
    }
    return CodeActions(*doc, range);
  }
  Position pos;
  if (!ReadPosition(params, &pos)) {
    *error = {kInvalidParams, "`" + method + "` needs `position` {line, character}"};
    return Json();
  }
  if (method == "textDocument/hover") return Hover(*doc, pos, markdown_);
  if (method == "textDocument/definition") return Definition(*doc, pos);
  if (method == "textDocument/documentHighlight") return DocumentHighlights(*doc, pos);
  if (method == "textDocument/prepareRename") return PrepareRename(*doc, pos);
  if (method == "textDocument/rename") {
    const Json* name = params.Get("newName");
    if (name == nullptr || !name->is_string()) {
      *error = {kInvalidParams, "`textDocument/rename` needs `newName`"};
      return Json();
    }
    std::string message;
    std::optional<Json> edit = Rename(*doc, pos, name->as_string(), &message);
    if (!edit) {
      *error = {kRequestFailed, message};
      return Json();
    }
    return std::move(*edit);
  }
  if (method == "textDocument/signatureHelp") return SignatureHelp(*doc, pos);
  if (method == "textDocument/references") {
    const Json* context = params.GetObject("context");
    const Json* include = context ? context->Get("includeDeclaration") : nullptr;
    return References(*doc, pos, include && include->is_bool() && include->as_bool());
  }
  return Completion(*doc, pos);
}

Document* Server::FindDocument(const Json& params, Error* error) {
  const Json* td = params.GetObject("textDocument");
  const std::string* uri = td ? td->GetString("uri") : nullptr;
  if (uri == nullptr) {
    *error = {kInvalidParams, "missing `textDocument.uri`"};
    return nullptr;
  }
  auto it = documents_.find(*uri);
  if (it == documents_.end()) {
    *error = {kInvalidParams, "document `" + *uri + "` is not open"};
    return nullptr;
  }
  return &it->second;
}

void Server::AnalyzeStale() {
  for (auto& [uri, doc] : documents_) {
    if (doc.stale) Reanalyze(doc);
  }
}

void Server::Reanalyze(Document& doc) {
  doc.stale = false;
  doc.analysis = Analyze(doc.path, doc.text);
  if (doc.analysis->complete()) doc.last_good = doc.analysis;
  Notify("textDocument/publishDiagnostics", PublishDiagnosticsParams(doc));
}

void Server::HandleNotification(const std::string& method, const Json& params) {
  if (method == "exit") {
    exit_ = true;
    return;
  }
  if (!initialized_) return;  // the protocol says to drop these
  if (method == "textDocument/didOpen") {
    const Json* td = params.GetObject("textDocument");
    const std::string* uri = td ? td->GetString("uri") : nullptr;
    const std::string* text = td ? td->GetString("text") : nullptr;
    if (!uri || !text) {
      Log("didOpen without textDocument.uri/text");
      return;
    }
    Document doc;
    doc.uri = *uri;
    doc.path = UriToPath(*uri);
    doc.version = td->GetInt("version").value_or(0);
    doc.text = *text;
    Document& stored = documents_[*uri] = std::move(doc);
    Reanalyze(stored);
  } else if (method == "textDocument/didChange") {
    Error error{0, ""};
    Document* doc = FindDocument(params, &error);
    const Json* changes = params.GetArray("contentChanges");
    if (doc == nullptr || changes == nullptr) {
      Log("didChange: " + (doc ? std::string("missing contentChanges") : error.message));
      return;
    }
    for (const Json& change : changes->as_array()) {
      const std::string* text = change.GetString("text");
      if (text == nullptr) {
        Log("didChange: a change without `text`");
        continue;
      }
      const Json* range = change.GetObject("range");
      Range r;
      if (range == nullptr) {
        doc->text = *text;
      } else if (ReadRange(*range, &r)) {
        ApplyEdit(&doc->text, r, *text);
      } else {
        Log("didChange: malformed range; change ignored");
      }
    }
    if (const Json* td = params.GetObject("textDocument")) {
      doc->version = td->GetInt("version").value_or(doc->version);
    }
    doc->stale = true;  // analysed when the input is drained (see Run)
  } else if (method == "textDocument/didClose") {
    Error error{0, ""};
    Document* doc = FindDocument(params, &error);
    if (doc == nullptr) return;
    Json clear = Json::MakeObject();
    clear.Set("uri", doc->uri);
    clear.Set("diagnostics", Json::MakeArray());
    documents_.erase(doc->uri);
    Notify("textDocument/publishDiagnostics", std::move(clear));
  }
  // initialized, didSave, $/cancelRequest, $/setTrace and unknown notifications need nothing.
}

int RunStdioServer() {
  int code = 1;
  frontend::RunWithLargeStack([&] {
    Transport transport(STDIN_FILENO, STDOUT_FILENO);
    Server server(transport);
    code = server.Run();
  });
  return code;
}

}  // namespace flow::lsp
