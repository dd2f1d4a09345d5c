#include "oracle/selfcheck.h"

#include <algorithm>
#include <chrono>
#include <random>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "oracle/random_case.h"

namespace gnncheck::oracle {
namespace {

std::shared_ptr<const Graph> graph_from_edges(index_t n_dst, index_t n_src, std::vector<index_t> dst,
                                              std::vector<index_t> src) {
  return std::make_shared<const Graph>(Graph::from_edges(n_dst, n_src, dst, src));
}

// Attribute values tried besides the defaults, one attribute changed at a time (with what it needs
// to act): each attribute's AttributeSpec::selfcheck_variants, in the entry's order.
std::vector<Attributes> attribute_variants(const TargetSpec& spec) {
  std::vector<Attributes> variants = {Attributes{}};
  for (const AttributeSpec& attribute : spec.attributes)
    variants.insert(variants.end(), attribute.selfcheck_variants.begin(), attribute.selfcheck_variants.end());
  return variants;
}

// On the large graph: the defaults and each attribute's AttributeSpec::large_graph_variants.
std::vector<Attributes> large_graph_variants(const TargetSpec& spec) {
  std::vector<Attributes> variants = {Attributes{}};
  for (const AttributeSpec& attribute : spec.attributes)
    variants.insert(variants.end(), attribute.large_graph_variants.begin(), attribute.large_graph_variants.end());
  return variants;
}

std::string describe(const Attributes& attributes) {
  if (attributes.values().empty()) return "defaults";
  std::vector<std::string> parts;
  for (const auto& [name, value] : attributes.values()) parts.push_back(fmt::format("{}={}", name, gnncheck::to_string(value)));
  return fmt::format("{}", fmt::join(parts, ","));
}

std::string format_error(double value) { return fmt::format("{:.2e}", value); }

}  // namespace

Graph make_skewed_graph(index_t n_dst, index_t n_src, index_t num_edges, std::uint64_t seed) {
  if (n_dst < 1 || n_src < 1 || num_edges < 0)
    throw InputError(fmt::format("skewed graph: needs n_dst ≥ 1, n_src ≥ 1, edges ≥ 0; got {}×{}, {} edges", n_dst,
                                 n_src, num_edges));
  std::mt19937_64 rng(seed);
  const auto uniform = [&rng] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };
  std::vector<index_t> dst(static_cast<size_t>(num_edges)), src(static_cast<size_t>(num_edges));
  for (index_t e = 0; e < num_edges; ++e) {
    const double r = uniform(), s = uniform();
    dst[static_cast<size_t>(e)] = std::min(n_dst - 1, static_cast<index_t>(static_cast<double>(n_dst) * r * r));
    src[static_cast<size_t>(e)] = std::min(n_src - 1, static_cast<index_t>(static_cast<double>(n_src) * s * s * s));
  }
  return Graph::from_edges(n_dst, n_src, dst, src);
}

std::vector<NamedGraph> selfcheck_small_graphs() {
  return {
      // Non-square 3×4: duplicate edge (0<-2 twice), empty row 1, isolated source 3, A ≠ Aᵀ.
      {"nonsquare-3x4", graph_from_edges(3, 4, {0, 0, 0, 2, 2}, {2, 1, 2, 0, 2})},
      // Square 5×5, directed: self-loop (2<-2), duplicate (1<-4 twice), in-degrees [2,3,1,3,1] differ
      // from out-degrees [1,2,3,1,2] on most nodes.
      {"directed-5x5", graph_from_edges(5, 5, {0, 0, 1, 1, 1, 2, 3, 3, 3, 4}, {1, 2, 2, 4, 4, 2, 0, 1, 2, 3})},
      // Sampled block 2×5 (destinations are the first sources, as layers need): destination 1 has
      // a duplicate in-edge from 3; source 3 feeds both destinations.
      {"block-2x5", graph_from_edges(2, 5, {0, 0, 0, 1, 1, 1, 1}, {0, 3, 4, 1, 2, 3, 3})},
  };
}

SelfcheckReport run_selfcheck(const SelfcheckOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<const TargetDef*> targets;
  for (const std::string& name : options.targets) targets.push_back(&find_target(name));
  if (options.targets.empty())
    for (const TargetDef& def : all_targets()) targets.push_back(&def);
  if (options.include_large && options.large_edges < 1)
    throw InputError(fmt::format("selfcheck: large_edges must be positive, got {}", options.large_edges));

  GradcheckOptions gradcheck = options.gradcheck;
  gradcheck.seed = options.seed;
  const CaseEvaluator oracle =
      options.evaluate ? options.evaluate : CaseEvaluator([](const Case& c) { return evaluate(c, Precision::float64); });
  const std::vector<NamedGraph> small = selfcheck_small_graphs();
  std::shared_ptr<const Graph> large;
  const index_t large_nodes = std::max<index_t>(1, options.large_edges / 4);
  if (options.include_large)
    large = std::make_shared<const Graph>(make_skewed_graph(large_nodes, large_nodes, options.large_edges, options.seed));

  SelfcheckReport report;
  report.seed = options.seed;
  if (options.out) {
    fmt::print(*options.out, "gnncheck selfcheck: oracle backward vs central differences (float64), seed {}\n",
               options.seed);
    fmt::print(*options.out, "  full Jacobian on {} small graphs; random directions on {}\n", small.size(),
               large ? fmt::format("{} ({} directions)", large->summary(), gradcheck.directions) : "(skipped)");
    fmt::print(*options.out, "  step h = {} (full) / {} (directions) · max(1, |x|), bound on relative error = {}\n",
               format_error(gradcheck.step), format_error(gradcheck.direction_step), format_error(gradcheck.bound));
    fmt::print(*options.out, "{:<20} {:<12} {:>20} {:>22} {:>9}  {}\n", "target", "input", "full Jacobian (cases)",
               "random dirs (count)", "bound", "verdict");
  }

  for (const TargetDef* def : targets) {
    const std::vector<std::string> inputs = differentiable_inputs(def->spec);
    std::vector<SelfcheckLine> lines;
    for (const std::string& input : inputs)
      lines.push_back(SelfcheckLine{def->spec.name, input, 0, 0.0, {}, 0, 0.0, {}, gradcheck.bound, {}, false});
    auto line_of = [&](const std::string& input) -> SelfcheckLine& {
      for (SelfcheckLine& line : lines)
        if (line.input == input) return line;
      throw InternalError(fmt::format("selfcheck: {} has no differentiable input '{}'", def->spec.name, input));
    };
    auto record_failure = [&](const std::string& where, const std::string& message) {
      for (SelfcheckLine& line : lines)
        if (line.failure.empty()) line.failure = fmt::format("{}: {}", where, message);
    };
    for (const NamedGraph& named : small) {
      if (def->spec.needs_square_graph && !named.graph->is_square()) continue;
      for (const Attributes& variant : attribute_variants(def->spec)) {
        const std::string where = fmt::format("{} {}", named.name, describe(variant));
        try {
          const Case c = make_random_case(*def, named.graph, variant, options.seed);
          const GradcheckReport r = check_full_jacobian(oracle, c, def->spec, gradcheck);
          if (!r.failure.empty()) record_failure(where, r.failure);
          for (const InputAgreement& in : r.inputs) {
            SelfcheckLine& line = line_of(in.input);
            line.left_out_at_kinks += in.left_out_at_kinks;
            if (in.comparisons == 0 && in.left_out_at_kinks > 0) continue;  // nothing compared
            line.full_cases += 1;
            if (line.full_worst_where.empty() || in.worst_relative_error > line.full_worst_error) {
              line.full_worst_error = in.worst_relative_error;
              line.full_worst_where = fmt::format("{}: {}", where, in.worst_location);
            }
          }
        } catch (const InputError& e) {
          record_failure(where, e.what());
        }
      }
    }
    if (large && !(def->spec.needs_square_graph && !large->is_square())) {
      for (const Attributes& variant : large_graph_variants(def->spec)) {
        const std::string where = fmt::format("large {} {}", large->summary(), describe(variant));
        try {
          const Case c = make_random_case(*def, large, variant, options.seed);
          const GradcheckReport r = check_random_directions(oracle, c, def->spec, gradcheck);
          if (!r.failure.empty()) record_failure(where, r.failure);
          for (const InputAgreement& in : r.inputs) {
            SelfcheckLine& line = line_of(in.input);
            line.directions += in.comparisons;
            line.left_out_at_kinks += in.left_out_at_kinks;
            if (line.directions_worst_where.empty() || in.worst_relative_error > line.directions_worst_error) {
              line.directions_worst_error = in.worst_relative_error;
              line.directions_worst_where = fmt::format("{}: {}", where, in.worst_location);
            }
          }
        } catch (const InputError& e) {
          record_failure(where, e.what());
        }
      }
    }
    for (SelfcheckLine& line : lines) {
      line.passed = line.failure.empty() && line.full_cases > 0 && line.full_worst_error <= line.bound &&
                    (!large || line.directions > 0) && line.directions_worst_error <= line.bound;
      if (options.out) {
        fmt::print(*options.out, "{:<20} {:<12} {:>13} ({:>4}) {:>13} ({:>5}) {:>9}  {}\n", line.target, line.input,
                   format_error(line.full_worst_error), line.full_cases,
                   large ? format_error(line.directions_worst_error) : "-", line.directions,
                   format_error(line.bound), line.passed ? "OK" : "FAIL");
        if (line.left_out_at_kinks > 0)
          fmt::print(*options.out, "    {} Jacobian column(s) or direction(s) left out: every step tried crossed a kink\n",
                     line.left_out_at_kinks);
        if (!line.passed) {
          if (!line.failure.empty()) fmt::print(*options.out, "    failed: {}\n", line.failure);
          if (line.full_worst_error > line.bound) fmt::print(*options.out, "    worst at {}\n", line.full_worst_where);
          if (line.directions_worst_error > line.bound)
            fmt::print(*options.out, "    worst at {}\n", line.directions_worst_where);
        }
      }
      report.lines.push_back(std::move(line));
    }
  }
  report.all_passed = std::all_of(report.lines.begin(), report.lines.end(), [](const auto& l) { return l.passed; });
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (options.out) {
    const auto failed = std::count_if(report.lines.begin(), report.lines.end(), [](const auto& l) { return !l.passed; });
    fmt::print(*options.out, "{}: {} of {} target inputs agree within the bound ({:.1f} s)\n",
               report.all_passed ? "PASSED" : "FAILED", report.lines.size() - static_cast<size_t>(failed),
               report.lines.size(), report.seconds);
  }
  return report;
}

}  // namespace gnncheck::oracle
