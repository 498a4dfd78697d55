#pragma once
// flow::lsp::Server: the Flow language server (`flowc lsp`). Reads JSON-RPC 2.0 messages from a
// Transport and answers them one at a time, in order.
//
// Lifecycle (LSP 3.17): requests before `initialize` get ServerNotInitialized (-32002) and
// notifications before it are dropped; after `shutdown` requests get InvalidRequest; `exit` ends
// Run with 0 when `shutdown` came first, else 1; end of input ends it the same way.
// Errors never end the server: malformed JSON -> ParseError (-32700, id null); not a request
// object -> InvalidRequest (-32600); unknown request -> MethodNotFound (-32601; unknown
// notifications are ignored); bad params -> InvalidParams (-32602); a message over the transport's
// size limit -> InvalidRequest (id null). Logs go to stderr only.
// Changes are coalesced: a didChange only records the new text while more input is already
// waiting; the document is analysed (and its diagnostics published) once the input is drained,
// or before a request reads it. So a burst of keystrokes on a large file costs one analysis.
// Threading: single-threaded; Run blocks until exit.

#include <map>
#include <string>

#include "lsp/document.h"
#include "lsp/json.h"
#include "lsp/transport.h"

namespace flow::lsp {

// JSON-RPC and LSP error codes.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kServerNotInitialized = -32002;
inline constexpr int kRequestFailed = -32803;

class Server {
 public:
  explicit Server(Transport& transport) : transport_(transport) {}

  // Serves until `exit` or end of input; returns the process exit code.
  int Run();

 private:
  struct Error {
    int code;
    std::string message;
  };

  void HandleMessage(const std::string& body);
  void HandleRequest(const Json& id, const std::string& method, const Json& params);
  void HandleNotification(const std::string& method, const Json& params);
  // Runs a text document request; sets *error on failure.
  Json DocumentRequest(const std::string& method, const Json& params, Error* error);

  // The open document named by params.textDocument.uri; sets *error when missing or unknown.
  Document* FindDocument(const Json& params, Error* error);
  void Reanalyze(Document& doc);
  // Analyses every stale document and publishes its diagnostics.
  void AnalyzeStale();

  void Reply(const Json& id, Json result);
  void ReplyError(const Json& id, int code, const std::string& message);
  void Notify(const std::string& method, Json params);

  Transport& transport_;
  std::map<std::string, Document> documents_;
  bool initialized_ = false;
  bool shutdown_ = false;
  bool exit_ = false;
  bool markdown_ = true;  // the client renders Markdown in hovers
};

// Runs the server on stdin/stdout (on a thread with a large stack, like the front end). The
// `flowc lsp` command.
int RunStdioServer();

}  // namespace flow::lsp
