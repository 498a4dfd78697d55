#include "ast_dump.h"

#include <cstdio>

namespace flow::format::testing {
namespace {

class Dumper {
 public:
  std::string out;

  void Type(const ast::TypeRef& t) {
    out += "(type " + t.name.name;
    if (t.arg) {
      out += " ";
      Type(*t.arg);
    }
    if (t.nullable) out += " ?";
    out += ")";
  }
  void Duration(const ast::DurationRef& d) {
    out += d.is_param ? "(dur-param " + d.param + ")" : "(dur " + std::to_string(d.millis) + ")";
  }
  void Expr(const ast::Expr* e) {
    if (e == nullptr) {
      out += "nil";
      return;
    }
    switch (e->kind) {
      case ast::ExprKind::kError:
        out += "(error)";
        break;
      case ast::ExprKind::kLiteral: {
        auto* l = static_cast<const ast::LiteralExpr*>(e);
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.17g", l->float_value);
        out += "(lit " + std::to_string(static_cast<int>(l->literal)) + " " +
               std::to_string(l->int_value) + " " + buf + " " + (l->bool_value ? "T" : "F") +
               " \"" + l->string_value + "\")";
        break;
      }
      case ast::ExprKind::kName:
        out += "(name " + static_cast<const ast::NameExpr*>(e)->name + ")";
        break;
      case ast::ExprKind::kField: {
        auto* f = static_cast<const ast::FieldExpr*>(e);
        out += "(field ";
        Expr(f->base.get());
        out += " " + f->field.name + ")";
        break;
      }
      case ast::ExprKind::kIndex: {
        auto* x = static_cast<const ast::IndexExpr*>(e);
        out += "(index ";
        Expr(x->base.get());
        out += " ";
        Expr(x->index.get());
        out += ")";
        break;
      }
      case ast::ExprKind::kUnary: {
        auto* u = static_cast<const ast::UnaryExpr*>(e);
        out += u->op == ast::UnaryOp::kNot ? "(not " : "(neg ";
        Expr(u->operand.get());
        out += ")";
        break;
      }
      case ast::ExprKind::kBinary: {
        auto* b = static_cast<const ast::BinaryExpr*>(e);
        out += "(bin " + std::to_string(static_cast<int>(b->op)) + " ";
        Expr(b->lhs.get());
        out += " ";
        Expr(b->rhs.get());
        out += ")";
        break;
      }
      case ast::ExprKind::kIn: {
        auto* x = static_cast<const ast::InExpr*>(e);
        out += x->negated ? "(not-in " : "(in ";
        Expr(x->operand.get());
        for (const auto& i : x->items) {
          out += " ";
          Expr(i.get());
        }
        out += ")";
        break;
      }
      case ast::ExprKind::kIsNull: {
        auto* x = static_cast<const ast::IsNullExpr*>(e);
        out += x->negated ? "(is-not-null " : "(is-null ";
        Expr(x->operand.get());
        out += ")";
        break;
      }
      case ast::ExprKind::kCall: {
        auto* c = static_cast<const ast::CallExpr*>(e);
        out += "(call " + c->name.name + (c->star ? " *" : "");
        for (const auto& a : c->args) {
          out += " ";
          Expr(a.get());
        }
        out += ")";
        break;
      }
      case ast::ExprKind::kCast: {
        auto* c = static_cast<const ast::CastExpr*>(e);
        out += "(cast ";
        Expr(c->operand.get());
        out += " ";
        Type(c->target);
        out += ")";
        break;
      }
      case ast::ExprKind::kCase: {
        auto* c = static_cast<const ast::CaseExpr*>(e);
        out += "(case";
        for (const auto& w : c->whens) {
          out += " (when ";
          Expr(w.condition.get());
          out += " ";
          Expr(w.value.get());
          out += ")";
        }
        out += " else ";
        Expr(c->else_value.get());
        out += ")";
        break;
      }
      case ast::ExprKind::kList: {
        auto* l = static_cast<const ast::ListExpr*>(e);
        out += "(list";
        for (const auto& i : l->items) {
          out += " ";
          Expr(i.get());
        }
        out += ")";
        break;
      }
    }
  }
  void Args(const std::vector<ast::NamedArg>& args) {
    for (const auto& a : args) {
      out += " (" + a.name.name + " ";
      Expr(a.value.get());
      out += ")";
    }
  }
  void Connector(const ast::ConnectorCall& c) {
    out += "(connector " + c.name.name;
    Args(c.args);
    out += ")";
  }
  void Format(const std::optional<ast::FormatClause>& f) {
    if (!f) return;
    out += " (format " + f->name.name;
    Args(f->args);
    out += ")";
  }
  void Window(const ast::WindowSpec& w) {
    out += "(window " + std::to_string(static_cast<int>(w.shape)) + " ";
    Duration(w.size);
    if (w.slide) Duration(*w.slide);
    if (w.lateness) {
      out += " late ";
      Duration(*w.lateness);
    }
    if (w.processing_time) out += " proc";
    out += ")";
  }
  void Named(const ast::NamedExpr& n) {
    Expr(n.expr.get());
    if (n.alias) out += " as " + n.alias->name;
  }
  void Pipeline(const ast::Pipeline& p) {
    out += "(pipeline ";
    if (p.head) out += "(head " + p.head->name + ")";
    if (p.source) {
      const ast::Source& s = *p.source;
      out += "(source ";
      Connector(s.connector);
      Format(s.format);
      if (s.schema) out += " (as " + s.schema->name + ")";
      if (s.event_time) {
        out += " (event-time ";
        Expr(s.event_time->expr.get());
        out += " ";
        Duration(s.event_time->watermark);
        if (s.event_time->idle) Duration(*s.event_time->idle);
        out += ")";
      }
      if (s.on_error) {
        out += " (on-error " + std::to_string(static_cast<int>(s.on_error->kind));
        if (s.on_error->sink) Connector(*s.on_error->sink);
        Format(s.on_error->format);
        out += ")";
      }
      out += ")";
    }
    for (const auto& op : p.ops) {
      out += "\n  (op " + std::to_string(static_cast<int>(op->kind)) + " ";
      switch (op->kind) {
        case ast::OpKind::kWhere:
          Expr(static_cast<const ast::WhereOp&>(*op).condition.get());
          break;
        case ast::OpKind::kKeyBy:
          for (const auto& k : static_cast<const ast::KeyByOp&>(*op).keys) Expr(k.get());
          break;
        case ast::OpKind::kWindow: {
          const auto& w = static_cast<const ast::WindowOp&>(*op);
          Window(w.spec);
          if (w.late_sink) {
            out += " on late into ";
            Connector(w.late_sink->sink);
            Format(w.late_sink->format);
            out += " delivery " + std::to_string(static_cast<int>(w.late_sink->delivery)) +
                   (w.late_sink->delivery_range ? " explicit" : "");
          }
          break;
        }
        case ast::OpKind::kAggregate:
          for (const auto& n : static_cast<const ast::AggregateOp&>(*op).items) Named(n);
          break;
        case ast::OpKind::kSelect:
          for (const auto& i : static_cast<const ast::SelectOp&>(*op).items) {
            if (i.star) {
              out += "* ";
            } else {
              Named(i.item);
            }
            out += "; ";
          }
          break;
        case ast::OpKind::kExplode: {
          const auto& x = static_cast<const ast::ExplodeOp&>(*op);
          Expr(x.list.get());
          out += " as " + x.alias.name;
          break;
        }
        case ast::OpKind::kUnion:
          for (const auto& s : static_cast<const ast::UnionOp&>(*op).streams) out += s.name + " ";
          break;
        case ast::OpKind::kJoin: {
          const auto& j = static_cast<const ast::JoinOp&>(*op);
          out += j.right.name + " ";
          Expr(j.condition.get());
          if (j.within) Duration(*j.within);
          if (j.window) Window(*j.window);
          break;
        }
        case ast::OpKind::kInto: {
          const auto& i = static_cast<const ast::IntoOp&>(*op);
          Connector(i.sink);
          Format(i.format);
          out += " delivery " + std::to_string(static_cast<int>(i.delivery)) +
                 (i.delivery_range ? " explicit" : "");
          break;
        }
      }
      out += ")";
    }
    out += ")";
  }
};

}  // namespace

std::string DumpProgram(const ast::Program& program) {
  Dumper d;
  for (const auto& decl : program.decls) {
    switch (decl->kind) {
      case ast::DeclKind::kParam: {
        auto* p = static_cast<const ast::ParamDecl*>(decl.get());
        d.out += "(param " + p->name.name + " ";
        d.Type(p->type);
        d.out += " ";
        d.Expr(p->default_value.get());
        d.out += ")";
        break;
      }
      case ast::DeclKind::kSchema: {
        auto* s = static_cast<const ast::SchemaDecl*>(decl.get());
        d.out += "(schema " + s->name.name;
        for (const auto& f : s->fields) {
          d.out += " (" + f.name.name + " ";
          // The wire name only when it differs: `"x" as x` means `x`.
          if (f.Wire() != f.name.name) d.out += "(wire " + f.Wire() + ") ";
          d.Type(f.type);
          d.out += ")";
        }
        d.out += ")";
        break;
      }
      case ast::DeclKind::kExternFn: {
        auto* f = static_cast<const ast::ExternFnDecl*>(decl.get());
        d.out += "(extern " + f->name.name;
        for (const auto& p : f->params) {
          d.out += " (" + p.name.name + " ";
          d.Type(p.type);
          d.out += ")";
        }
        d.out += " -> ";
        d.Type(f->returns);
        d.out += " \"" + f->header + "\")";
        break;
      }
      case ast::DeclKind::kStream: {
        auto* s = static_cast<const ast::StreamDecl*>(decl.get());
        d.out += "(stream " + s->name.name + " ";
        d.Pipeline(s->pipeline);
        d.out += ")";
        break;
      }
      case ast::DeclKind::kPipeline:
        d.Pipeline(static_cast<const ast::PipelineStmt*>(decl.get())->pipeline);
        break;
    }
    d.out += "\n";
  }
  return d.out;
}

}  // namespace flow::format::testing
