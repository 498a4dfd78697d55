#pragma once
// How a plan runs as instances of one job (--instance, docs/deploy.md), for `flowc explain`:
// which nodes each instance runs between repartition topics (the stages), which topic cuts each
// key-by, and what the runtime refuses to run that way yet. It mirrors what codegen and the
// runtime do (codegen/aggregate_emitter.cpp's Keyed, engine/shuffle_key_by.h and
// Job::CheckInstancePlan): a window or aggregate reads its input through the topic
// `__flow_repartition_<job id>.<operator>`, and so do both sides of a join (one topic:
// engine/shuffle_join.h), also behind another one's topic (a second key-by: a window behind a
// window or a join); sources other than Kafka and exactly-once file sinks cannot run as instances
// (yet). Pure; the plan is not changed.

#include <string>
#include <vector>

#include "plan/plan.h"

namespace flow::plan {

// Every instance runs every stage, each on its share of the stage's input partitions (the
// sources' partitions for stage 1, a repartition topic's for the others).
struct InstanceStage {
  int number = 0;          // 1, 2, ...
  std::vector<int> nodes;  // plan node ids, in plan order; key-by nodes are in `cuts`
};

// A key-by (or the all-to-one edge of a global aggregate, or both sides of a join) cut through a
// repartition topic.
struct RepartitionCut {
  int consumer = -1;  // the window, aggregate or join node that reads the topic
  int key_by = -1;    // the KeyByNode it replaces; -1 for a global aggregate or a join
  std::string op;     // the consumer's runtime name, e.g. "per_minute.window"
  std::string topic;  // with "<job id>" for the job's id
  std::string key;    // "user, url"; "o.id (left), p.order_id (right)"; empty when global
  std::vector<int> from_stages;  // the stages that write it, ascending (a join's sides: two)
  int to_stage = 0;              // the stage that reads it
};

struct InstancePlan {
  std::vector<InstanceStage> stages;
  std::vector<RepartitionCut> cuts;
  // One line per node the runtime refuses under --instance, "#7 join: why"; empty when the plan
  // runs as instances.
  std::vector<std::string> refusals;
};

InstancePlan PlanInstances(const Plan& plan);

// A key as written, for plans and logs: `a.k` or `k`; any other expression as "expr".
std::string KeyExprText(const ast::Expr* e);

}  // namespace flow::plan
