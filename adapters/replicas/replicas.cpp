// The machinery of the CPU bug replicas: a base system wrapped with one bug (the catalogue is in
// replica_catalogue.cpp), the attributes that reveal a bug, and the replicas as known-wrong variants.
#include "adapters/replicas/replicas.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "adapters/replicas/replica_system.h"
#include "oracle/cpu_systems.h"
#include "oracle/targets.h"

namespace gnncheck {
namespace {

// A correct base system with one catalogue bug injected into its answers.
class ReplicaSystem final : public System {
 public:
  ReplicaSystem(ReplicaInfo info, std::unique_ptr<System> base)
      : info_(std::move(info)), base_(std::move(base)), bug_(replicas::make_bug(info_)) {}

  std::string name() const override { return info_.name; }
  Availability availability() const override { return base_->availability(); }
  bool supports(const std::string& target) const override {
    bool listed = false;
    for (const auto& t : info_.targets) listed = listed || t == target;
    return listed && base_->supports(target);
  }
  Precision precision(const std::string& target) const override {
    return info_.declared_precision.value_or(base_->precision(target));
  }
  // A declared precision without a declared accumulation is one format (15: TF32 over an exact base).
  Precision accumulation(const std::string& target) const override {
    if (info_.declared_accumulation) return *info_.declared_accumulation;
    return info_.declared_precision ? *info_.declared_precision : base_->accumulation(target);
  }
  std::optional<std::int64_t> live_bytes() const override {
    const std::optional<std::int64_t> base = base_->live_bytes();
    if (!base && bug_->held_bytes() == 0) return std::nullopt;
    return base.value_or(0) + bug_->held_bytes();
  }

  Result evaluate(const Case& c) override {
    if (!supports(c.target)) {
      Result r;
      r.status = Status::unsupported;
      r.message = fmt::format("replica '{}' injects its bug into {}; not into '{}'", info_.name,
                              fmt::join(info_.targets, ", "), c.target);
      return r;
    }
    Result r = base_->evaluate(c);
    if (!r.ok()) return r;
    try {
      const oracle::TargetDef& def = oracle::entry_of(c);
      replicas::BugContext ctx{c, def, oracle::with_defaults(def.spec, c.attributes), precision(c.target), r};
      bug_->inject(ctx);
    } catch (const std::exception& e) {  // InputError from an op, InternalError from a broken catalogue
      r = Result{};
      r.status = Status::error;
      r.message = fmt::format("replica '{}': {}", info_.name, e.what());
    }
    return r;
  }

 private:
  ReplicaInfo info_;
  std::unique_ptr<System> base_;
  std::unique_ptr<replicas::Bug> bug_;
};

}  // namespace

Attributes revealing_attributes(const ReplicaInfo& info, const oracle::TargetSpec& target, const Graph& graph,
                                Attributes base) {
  for (const auto& [name, value] : info.shows_with.values()) base.set(name, value);
  const std::vector<std::string> widths = oracle::width_attributes(target);
  const bool heads = target.has_attribute("heads");
  const auto set_widths = [&](std::int64_t w) {
    for (const auto& name : widths) base.set(name, w);
  };
  switch (info.shape) {
    case ReplicaInfo::Shape::any: break;
    case ReplicaInfo::Shape::row_wider_than_64:
      set_widths(127);
      if (heads) base.set("heads", std::int64_t{1});
      break;
    case ReplicaInfo::Shape::square_node_matrix:
      if (widths.empty()) {
        if (heads) base.set("heads", std::int64_t{graph.n_src()});
      } else {
        set_widths(graph.n_src());
        if (heads) base.set("heads", std::int64_t{1});
      }
      break;
    case ReplicaInfo::Shape::heads_equal_features:
      base.set("heads", std::int64_t{2});
      base.set("features", std::int64_t{2});
      break;
  }
  return base;
}


std::vector<oracle::WrongVariant> replica_variants(const std::string& target) {
  std::vector<oracle::WrongVariant> out;
  for (const ReplicaInfo& info : replica_catalogue()) {
    if ((!info.single_evaluation && !info.after_previous_call) ||
        std::find(info.targets.begin(), info.targets.end(), target) == info.targets.end())
      continue;
    out.push_back({info.name, info.bug_class, info.bug_class_description, 100 + info.number,
                   [name = info.name, in_system_precision = info.in_system_precision,
                    after_previous = info.after_previous_call](
                       const Case& c, const oracle::VariantContext& context) -> std::optional<Result> {
                     if (after_previous && !context.previous) return std::nullopt;
                     // The float64 oracle as base; a bug that exists only in the system's precision
                     // is evaluated on the float32 oracle for a system that is not float64.
                     std::unique_ptr<System> base = in_system_precision && context.precision != Precision::float64
                                                        ? make_cpu_float32_system()
                                                        : make_oracle_system();
                     std::unique_ptr<System> replica = make_replica(name, std::move(base));
                     if (after_previous && !replica->evaluate(*context.previous).ok()) return std::nullopt;
                     Result r = replica->evaluate(c);
                     if (!r.ok()) return std::nullopt;
                     return r;
                   }});
  }
  return out;
}

std::unique_ptr<System> make_replica(const std::string& name, std::unique_ptr<System> base) {
  if (!base) throw InputError(fmt::format("replica '{}' needs a base system to wrap; got none", name));
  return std::make_unique<ReplicaSystem>(find_replica(name), std::move(base));
}

}  // namespace gnncheck
