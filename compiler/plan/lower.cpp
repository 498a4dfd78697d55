// Lowering: walks the checked program's statements in source order; every stream name maps to the
// node that ends its pipeline, so later pipelines and joins can read it.

#include <map>

#include "plan/plan.h"
#include "sema/connectors.h"

namespace flow::plan {
namespace {

class Lowerer {
 public:
  explicit Lowerer(const sema::CheckedProgram& program) : program_(program) {
    plan_ = std::make_unique<Plan>();
    plan_->program = &program;
  }

  std::unique_ptr<Plan> Run(diag::DiagnosticEngine& diags) {
    for (const ast::DeclPtr& d : program_.program.decls) {
      if (!error_.empty()) break;
      if (const auto* s = ast::As<ast::StreamDecl>(d.get())) {
        int end = LowerPipeline(s->pipeline, s->name.name);
        if (end >= 0) streams_[s->name.name] = end;
      } else if (const auto* p = ast::As<ast::PipelineStmt>(d.get())) {
        LowerPipeline(p->pipeline, "sink" + std::to_string(++sink_count_));
      }
    }
    if (!error_.empty()) {
      diags.Report(diag::Kind::kUnsupported, error_range_, error_);
      return nullptr;
    }
    PruneDead();
    return std::move(plan_);
  }

  // Streams nothing reads (sema warned) produce nodes that reach no sink; they are not run.
  void PruneDead() {
    std::vector<bool> live(plan_->nodes.size(), false);
    for (size_t i = plan_->nodes.size(); i-- > 0;) {
      Node* n = plan_->nodes[i].get();
      if (n->kind == NodeKind::kSink) live[i] = true;
      if (!live[i]) continue;
      for (int in : n->inputs) live[static_cast<size_t>(in)] = true;
    }
    for (size_t i = 0; i < live.size(); ++i) {
      if (!live[i]) plan_->nodes[i].reset();
    }
  }

 private:
  void Unsupported(const std::string& what, diag::SourceRange range) {
    if (!error_.empty()) return;
    error_ = what + " is not supported by flowc build yet";
    error_range_ = range;
  }

  template <class T>
  T* New(const std::string& stream, diag::SourceRange range, types::Type output,
         std::vector<int> inputs) {
    auto n = std::make_unique<T>();
    n->stream = stream;
    n->range = range;
    n->output = std::move(output);
    n->inputs = std::move(inputs);
    return plan_->Add(std::move(n));
  }

  int LowerPipeline(const ast::Pipeline& p, const std::string& stream) {
    int cur = -1;
    types::Type type;
    if (p.source) {
      const ast::Source& src = *p.source;
      diag::SourceRange where;
      if (std::string what = UnsupportedSource(src, &where); !what.empty()) {
        Unsupported(what, where);
        return -1;
      }
      // The schema type is the record type before the first operator.
      type = InputOfFirst(p);
      auto* n = New<SourceNode>(stream, src.range, type, {});
      n->source = &src;
      for (const types::Field& f : type.fields()) n->decoded.insert(f.name);
      cur = n->id;
    } else if (p.head) {
      auto it = streams_.find(p.head->name);
      if (it == streams_.end()) {
        Unsupported("reading stream `" + p.head->name + "`", p.head->range);
        return -1;
      }
      cur = it->second;
      type = plan_->Get(cur)->output;
    }
    const ast::KeyByOp* key = nullptr;
    const ast::JoinOp* pair = nullptr;  // set while the record is that join's pair (join_node.h)
    for (size_t i = 0; i < p.ops.size() && error_.empty(); ++i) {
      const ast::Op* op = p.ops[i].get();
      if (pair != nullptr && !ReadsJoinPair(*op)) {
        cur = FlattenPair(stream, pair, cur, type);
        type = pair->output;
        pair = nullptr;
      }
      // `where` keeps its input record (a join pair stays one).
      types::Type next_type = op->kind == ast::OpKind::kWhere ? type : op->output;
      switch (op->kind) {
        case ast::OpKind::kWhere:
        case ast::OpKind::kSelect:
        case ast::OpKind::kExplode: {
          auto* n = New<ChainNode>(stream, op->range, next_type, {cur});
          n->steps.push_back(ChainStep{op, type, next_type});
          cur = n->id;
          key = nullptr;
          break;
        }
        case ast::OpKind::kKeyBy: {
          auto* n = New<KeyByNode>(stream, op->range, type, {cur});
          n->op = ast::As<ast::KeyByOp>(op);
          key = n->op;
          cur = n->id;
          break;
        }
        case ast::OpKind::kWindow: {
          const auto* w = ast::As<ast::WindowOp>(op);
          const ast::AggregateOp* agg =
              i + 1 < p.ops.size() ? ast::As<ast::AggregateOp>(p.ops[i + 1].get()) : nullptr;
          if (agg == nullptr) {
            Unsupported("a window not followed by `aggregate`", op->range);
            break;
          }
          diag::SourceRange range = op->range;
          range.end = agg->range.end;
          auto* n = New<WindowAggregateNode>(stream, range, agg->output, {cur});
          n->key = key;
          n->window = w;
          n->aggregate = agg;
          cur = n->id;
          if (w->late_sink) LowerLateSink(stream, *w, *n);
          key = nullptr;
          next_type = agg->output;
          ++i;
          break;
        }
        case ast::OpKind::kAggregate: {
          const auto* agg = ast::As<ast::AggregateOp>(op);
          auto* n = New<RunningAggregateNode>(stream, op->range, op->output, {cur});
          n->key = key;
          n->aggregate = agg;
          cur = n->id;
          key = nullptr;
          break;
        }
        case ast::OpKind::kUnion: {
          const auto* u = ast::As<ast::UnionOp>(op);
          std::vector<int> inputs{cur};
          for (const ast::Ident& name : u->streams) {
            auto it = streams_.find(name.name);
            if (it == streams_.end()) {
              Unsupported("reading stream `" + name.name + "`", name.range);
              return -1;
            }
            inputs.push_back(it->second);
          }
          cur = New<UnionNode>(stream, op->range, op->output, inputs)->id;
          key = nullptr;
          break;
        }
        case ast::OpKind::kJoin: {
          const auto* j = ast::As<ast::JoinOp>(op);
          auto right = streams_.find(j->right.name);
          if (right == streams_.end()) {
            Unsupported("reading stream `" + j->right.name + "`", j->right.range);
            return -1;
          }
          std::string what;
          diag::SourceRange where;
          std::unique_ptr<JoinNode> n =
              MakeJoinNode(*j, type, plan_->Get(right->second)->output, &what, &where);
          if (!n) {
            Unsupported(what, where);
            break;
          }
          n->stream = stream;
          n->range = op->range;
          n->inputs = {cur, right->second};
          next_type = n->output;
          cur = plan_->Add(std::move(n))->id;
          pair = j;
          key = nullptr;
          break;
        }
        case ast::OpKind::kInto: {
          auto* n = New<SinkNode>(stream, op->range, type, {cur});
          n->into = ast::As<ast::IntoOp>(op);
          n->delivery = n->into->delivery;
          diag::SourceRange where;
          if (std::string what = UnsupportedSink(*n->into, &where); !what.empty())
            Unsupported(what, where);
          ResolveSinkKey(*plan_, n);
          cur = n->id;
          break;
        }
      }
      // Only `where` and `key by` pass a join pair on; every other operator made a new record.
      if (op->kind != ast::OpKind::kWhere && op->kind != ast::OpKind::kKeyBy &&
          op->kind != ast::OpKind::kJoin)
        pair = nullptr;
      type = next_type;
    }
    if (pair != nullptr && error_.empty()) cur = FlattenPair(stream, pair, cur, type);
    return error_.empty() ? cur : -1;
  }

  // `on late into ...`: a sink reading the window's late records (its input records).
  void LowerLateSink(const std::string& stream, const ast::WindowOp& w,
                     const WindowAggregateNode& window) {
    // The window's input node (a key by may pass a join pair on, unlike sema's record type).
    const types::Type input = plan_->Get(window.inputs[0])->output;
    if (IsJoinPair(input)) {
      Unsupported("routing the late records of a window that reads a join directly",
                  w.late_sink->range);
      return;
    }
    auto* n = New<SinkNode>(stream, w.late_sink->range, input, {window.id});
    n->into = w.late_sink.get();
    n->delivery = n->into->delivery;
    n->late = true;
    n->key_by = window.key;  // the late records are the window's input: its key expressions apply
    diag::SourceRange where;
    if (std::string what = UnsupportedSink(*n->into, &where); !what.empty())
      Unsupported(what, where);
  }

  // Operators that read a join pair as it is; any other needs the merged record sema gives the
  // join (a sink, a union, explode, a later join, `select *`).
  static bool ReadsJoinPair(const ast::Op& op) {
    switch (op.kind) {
      case ast::OpKind::kWhere:
      case ast::OpKind::kKeyBy:
      case ast::OpKind::kWindow:
      case ast::OpKind::kAggregate:
        return true;
      case ast::OpKind::kSelect:
        for (const ast::SelectItem& item : ast::As<ast::SelectOp>(&op)->items) {
          if (item.star) return false;
        }
        return true;
      default:
        return false;
    }
  }

  // A chain step that copies the pair of `join` into the join's merged record.
  int FlattenPair(const std::string& stream, const ast::JoinOp* join, int input,
                  const types::Type& pair_type) {
    auto* n = New<ChainNode>(stream, join->range, join->output, {input});
    n->steps.push_back(ChainStep{join, pair_type, join->output});
    return n->id;
  }

  // The source's record type: sema types the first operator's input as the schema; read it from
  // the schema declaration named by `as`.
  types::Type InputOfFirst(const ast::Pipeline& p) const {
    if (p.source && p.source->connector.name.name == "nexmark") {
      for (const ast::NamedArg& a : p.source->connector.args) {
        if (a.name.name != "kind") continue;
        if (const auto* n = ast::As<ast::NameExpr>(a.value.get()))
          return sema::NexmarkRecord(n->name);
        if (const auto* l = ast::As<ast::LiteralExpr>(a.value.get()))
          return sema::NexmarkRecord(l->string_value);
      }
    }
    if (p.source && p.source->schema) {
      auto it = program_.schemas.find(p.source->schema->name);
      if (it != program_.schemas.end()) return it->second->resolved;
    }
    return types::Type::Record("", {types::Field{"line", types::Type::String()}});
  }

  const sema::CheckedProgram& program_;
  std::unique_ptr<Plan> plan_;
  std::map<std::string, int> streams_;
  int sink_count_ = 0;
  std::string error_;
  diag::SourceRange error_range_;
};

}  // namespace

std::unique_ptr<Plan> Lower(const sema::CheckedProgram& program, diag::DiagnosticEngine& diags) {
  return Lowerer(program).Run(diags);
}

}  // namespace flow::plan
