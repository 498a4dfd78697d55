// Pipelines: the head, source clauses and one `| operator` per line.
#include <algorithm>
#include <cstdint>

#include "format/printer.h"

namespace flow::format {

// Layout decisions look only at widths and at comments that stay where they are when the output
// is formatted again (those before the last anchored piece of a construct stay inside it), so a
// second pass makes the same decisions.
void Printer::Pipeline(const ast::Pipeline& p) {
  const int prefix = out_.CurrentWidth();
  auto head_flat = [&] {
    if (p.source) {
      SourceHead(*p.source);
      SourceClauses(*p.source, /*flat=*/true);
    } else if (p.head) {
      Ident(*p.head);
    }
  };
  uint32_t head_last = 0;
  const int head_width = out_.Measure(head_flat, &head_last);
  const uint32_t after_head = p.ops.empty() ? next_decl_begin_ : p.ops[0]->range.begin;
  // A source with `on error` or with comments inside gets one line per clause.
  const bool source_breaks = p.source && (p.source->on_error.has_value() ||
                                          out_.HasCommentIn(p.source->range.begin, head_last));
  // `words | into stdout`: a single operator stays on the head's line when everything fits.
  if (p.ops.size() <= 1 && !source_breaks && !out_.HasCommentIn(head_last, after_head)) {
    int width = prefix + head_width;
    if (!p.ops.empty()) {
      uint32_t op_last = 0;
      width += 3 + out_.Measure([&] { Op(*p.ops[0]); }, &op_last);
      width += out_.TrailingCommentsWidth(op_last, next_decl_begin_);
    }
    if (width <= out_.max_width()) {
      head_flat();
      if (!p.ops.empty()) {
        out_.Text(" | ");
        Op(*p.ops[0]);
      }
      return;
    }
  }
  if (p.source) {
    // A comment trailing the head counts: moving the clauses onto its line would push it out.
    int trailing = out_.TrailingCommentsWidth(head_last, after_head);
    if (!source_breaks && prefix + head_width + trailing <= out_.max_width()) {
      head_flat();
    } else {
      SourceHead(*p.source);
      SourceClauses(*p.source, /*flat=*/false);
    }
  } else if (p.head) {
    Ident(*p.head);
  }
  for (const ast::OpPtr& op : p.ops) {
    out_.StartLine(I(1), I(3));
    out_.Anchor(op->range.begin);
    out_.Text("| ");
    Op(*op);
  }
}

void Printer::SourceHead(const ast::Source& s) {
  out_.Anchor(s.range.begin);
  out_.Text("from ");
  Connector(s.connector);
}

// `format ... as S`, `event time ...`, `on error ...`: on the head line when `flat`, else the
// format and schema stay on the head line if they fit and each other clause gets its own line.
void Printer::SourceClauses(const ast::Source& s, bool flat) {
  auto format_as = [&] {
    if (s.format) {
      out_.Text(" ");
      Format(*s.format);
    }
    if (s.schema) {
      out_.Text(" as ");
      Ident(*s.schema);
    }
  };
  if (flat) {
    format_as();
    if (s.event_time) {
      out_.Soft();
      EventTime(*s.event_time);
    }
    if (s.on_error) {
      out_.Soft();
      OnError(*s.on_error);
    }
    return;
  }
  if (s.format || s.schema) {
    // Its own line when it does not fit or when comments will be placed before or inside it.
    uint32_t connector_last = 0, clauses_last = 0;
    out_.Measure([&] { Connector(s.connector); }, &connector_last);
    int width = out_.Measure(format_as, &clauses_last);
    if (out_.HasCommentIn(connector_last, clauses_last) ||
        out_.CurrentWidth() + width > out_.max_width())
      out_.StartLine(I(1), I(2));
    format_as();
  }
  if (s.event_time) {
    out_.StartLine(I(1), I(2));
    EventTime(*s.event_time);
  }
  if (s.on_error) {
    out_.StartLine(I(1), I(2));
    OnError(*s.on_error);
  }
}

void Printer::EventTime(const ast::EventTimeClause& e) {
  out_.Anchor(e.range.begin);
  out_.Text("event time ");
  Expr(*e.expr);
  out_.Text(" watermark ");
  Duration(e.watermark);
  if (e.idle) {
    out_.Text(" idle ");
    Duration(*e.idle);
  }
}

void Printer::OnError(const ast::ErrorPolicy& e) {
  out_.Anchor(e.range.begin);
  out_.Text("on error ");
  switch (e.kind) {
    case ast::ErrorPolicyKind::kFail:
      out_.Text("fail");
      break;
    case ast::ErrorPolicyKind::kSkip:
      out_.Text("skip");
      break;
    case ast::ErrorPolicyKind::kDeadLetter:
      out_.Text("dead_letter ");
      if (e.sink) Connector(*e.sink);
      if (e.format) {
        out_.Soft();
        Format(*e.format);
      }
      break;
  }
}

void Printer::Connector(const ast::ConnectorCall& c) {
  Ident(c.name);
  // `stdout` and `stdout()` are both allowed; keep the parentheses when they were written.
  if (!c.args.empty() || c.range.end > c.name.range.end) {
    out_.Text("(");
    Args(c.args);
    out_.Text(")");
  }
}

void Printer::Format(const ast::FormatClause& f) {
  out_.Anchor(f.range.begin);
  out_.Text("format ");
  Ident(f.name);
  if (!f.args.empty() || f.range.end > f.name.range.end) {
    out_.Text("(");
    Args(f.args);
    out_.Text(")");
  }
}

void Printer::Args(const std::vector<ast::NamedArg>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (i > 0) {
      out_.Text(",");
      out_.Soft();
    }
    Ident(args[i].name);
    out_.Text(": ");
    Expr(*args[i].value);
  }
}

void Printer::Named(const ast::NamedExpr& n) {
  Expr(*n.expr);
  if (n.alias) {
    out_.Text(" as ");
    Ident(*n.alias);
  }
}

void Printer::Window(const ast::WindowSpec& w) {
  out_.Anchor(w.range.begin);
  switch (w.shape) {
    case ast::WindowShape::kTumbling:
      out_.Text("tumbling ");
      Duration(w.size);
      break;
    case ast::WindowShape::kSliding:
      out_.Text("sliding ");
      Duration(w.size);
      if (w.slide) {
        out_.Text(" every ");
        Duration(*w.slide);
      }
      break;
    case ast::WindowShape::kSession:
      out_.Text("session ");
      Duration(w.size);
      break;
  }
  if (w.zone) {
    out_.Text(" zone ");
    Zone(*w.zone);
  }
  if (w.lateness) {
    out_.Text(" lateness ");
    Duration(*w.lateness);
  }
  if (w.processing_time) out_.Text(" processing time");
}

void Printer::Op(const ast::Op& op) {
  auto list = [&](size_t n, auto&& item) {
    for (size_t i = 0; i < n; ++i) {
      if (i > 0) {
        out_.Text(",");
        out_.Soft();
      }
      item(i);
    }
  };
  switch (op.kind) {
    case ast::OpKind::kWhere:
      out_.Text("where ");
      Expr(*static_cast<const ast::WhereOp&>(op).condition);
      break;
    case ast::OpKind::kKeyBy: {
      const auto& k = static_cast<const ast::KeyByOp&>(op);
      out_.Text("key by ");
      list(k.keys.size(), [&](size_t i) { Expr(*k.keys[i]); });
      break;
    }
    case ast::OpKind::kWindow: {
      const auto& w = static_cast<const ast::WindowOp&>(op);
      out_.Text("window ");
      Window(w.spec);
      if (w.late_sink) {
        out_.Soft();
        out_.Anchor(w.late_sink->range.begin);
        out_.Text("on late ");
        Op(*w.late_sink);  // the same clauses as `into`
      }
      break;
    }
    case ast::OpKind::kAggregate: {
      const auto& a = static_cast<const ast::AggregateOp&>(op);
      out_.Text("aggregate ");
      list(a.items.size(), [&](size_t i) { Named(a.items[i]); });
      break;
    }
    case ast::OpKind::kSelect: {
      const auto& s = static_cast<const ast::SelectOp&>(op);
      out_.Text("select ");
      list(s.items.size(), [&](size_t i) {
        if (s.items[i].star) {
          out_.Anchor(s.items[i].star_range.begin);
          out_.Text("*");
        } else {
          Named(s.items[i].item);
        }
      });
      break;
    }
    case ast::OpKind::kExplode: {
      const auto& x = static_cast<const ast::ExplodeOp&>(op);
      out_.Text("explode ");
      Expr(*x.list);
      out_.Text(" as ");
      Ident(x.alias);
      break;
    }
    case ast::OpKind::kUnion: {
      const auto& u = static_cast<const ast::UnionOp&>(op);
      out_.Text("union ");
      list(u.streams.size(), [&](size_t i) { Ident(u.streams[i]); });
      break;
    }
    case ast::OpKind::kJoin: {
      const auto& j = static_cast<const ast::JoinOp&>(op);
      out_.Text("join ");
      Ident(j.right);
      out_.Text(" on ");
      Expr(*j.condition);
      if (j.within) {
        out_.Soft();
        out_.Text("within ");
        Duration(*j.within);
      } else if (j.window) {
        out_.Soft();
        out_.Text("window ");
        Window(*j.window);
      }
      break;
    }
    case ast::OpKind::kInto: {
      const auto& i = static_cast<const ast::IntoOp&>(op);
      out_.Text("into ");
      Connector(i.sink);
      if (i.format) {
        out_.Soft();
        Format(*i.format);
      }
      if (i.delivery_range) {
        out_.Soft();
        out_.Anchor(i.delivery_range->begin);
        out_.Text(i.delivery == ast::Delivery::kExactlyOnce ? "exactly_once" : "at_least_once");
      }
      break;
    }
  }
}

}  // namespace flow::format
