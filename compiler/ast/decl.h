#pragma once
// Top-level statements: params, schemas, extern functions, named streams, and sink pipelines.

#include <memory>
#include <string>
#include <vector>

#include "ast/common.h"
#include "ast/expr.h"
#include "ast/pipeline.h"

namespace flow::ast {

enum class DeclKind { kParam, kSchema, kExternFn, kStream, kPipeline };

struct Decl {
  explicit Decl(DeclKind k) : kind(k) {}
  virtual ~Decl() = default;
  DeclKind kind;
  SourceRange range;
};
using DeclPtr = std::unique_ptr<Decl>;

template <class T>
T* As(Decl* d) {
  return d && d->kind == T::kKind ? static_cast<T*>(d) : nullptr;
}
template <class T>
const T* As(const Decl* d) {
  return d && d->kind == T::kKind ? static_cast<const T*>(d) : nullptr;
}

// `param brokers: string = "127.0.0.1:9092"`; overridable at run time with --set.
struct ParamDecl : Decl {
  static constexpr DeclKind kKind = DeclKind::kParam;
  ParamDecl() : Decl(kKind) {}
  Ident name;
  TypeRef type;
  ExprPtr default_value;  // may be null: the param is then required at run time
  types::Type resolved;   // sema
};

// `user: string`, or with a wire name: `"user-id" as user_id: string`.
struct FieldDecl {
  Ident name;  // the name scripts use; for `"plain": int` the string's text, at the string
  TypeRef type;
  // The name in the data when written as a string (decoded), else empty: it is then `name`.
  std::string wire_name;
  SourceRange wire_range;  // the string literal; empty when the name is an identifier

  bool quoted() const { return wire_range.end > wire_range.begin; }
  const std::string& Wire() const { return quoted() ? wire_name : name.name; }
};

struct SchemaDecl : Decl {
  static constexpr DeclKind kKind = DeclKind::kSchema;
  SchemaDecl() : Decl(kKind) {}
  Ident name;
  std::vector<FieldDecl> fields;
  types::Type resolved;  // sema: a named record
};

struct FnParam {
  Ident name;
  TypeRef type;
};

// `extern fn risk(amount: float, country: string) -> float from "risk.h"`.
struct ExternFnDecl : Decl {
  static constexpr DeclKind kKind = DeclKind::kExternFn;
  ExternFnDecl() : Decl(kKind) {}
  Ident name;
  std::vector<FnParam> params;
  TypeRef returns;
  std::string header;
  SourceRange header_range;
  std::vector<types::Type> param_types;  // sema
  types::Type return_type;               // sema
};

struct StreamDecl : Decl {
  static constexpr DeclKind kKind = DeclKind::kStream;
  StreamDecl() : Decl(kKind) {}
  Ident name;
  Pipeline pipeline;
};

// A top-level pipeline; valid only when it ends in `into`.
struct PipelineStmt : Decl {
  static constexpr DeclKind kKind = DeclKind::kPipeline;
  PipelineStmt() : Decl(kKind) {}
  Pipeline pipeline;
};

struct Program {
  uint32_t file = 0;
  std::vector<DeclPtr> decls;  // in source order
};

}  // namespace flow::ast
