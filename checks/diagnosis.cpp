// The diagnosis of a failure: which known-wrong variant of the target reproduces the system's
// answer on the counterexample (checks/diagnosis.h).
#include "checks/diagnosis.h"
#include "checks/subgradient_set.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checks/check_support.h"
#include "checks/tolerance.h"
#include "core/error.h"

namespace gnncheck::checks {

using namespace detail;

namespace {

constexpr double kBudgetSeconds = 5.0;

// Whether `actual` lies outside the interval a correct answer may take around `exact` (the rule
// of compare_elementwise: a non-finite value where the exact one is finite is always outside; on
// the lower side of an asymmetric interval, below `lowest`).
bool outside(double actual, double exact, double bound, double lowest) {
  if (std::isnan(exact)) return !std::isnan(actual);
  if (std::isinf(exact)) return actual != exact;
  if (!std::isfinite(actual)) return true;
  if (!std::isnan(lowest) && actual < exact) return actual < lowest;
  return std::abs(actual - exact) > bound;
}

// Whether two answers agree within `bound`: the same non-finite value agrees (a variant that
// overflows where the system does reproduces it).
bool within(double a, double b, double bound) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::abs(a - b) <= bound;
}

// One compared tensor of the system's answer: the exact values, the bound, and which elements are wrong.
struct Compared {
  NamedTensor which;
  const Tensor* exact = nullptr;
  const Tensor* got = nullptr;
  const Tensor* bound = nullptr;
  const Tensor* lowest = nullptr;
  std::vector<bool> wrong;
};

// The most the rounding of the wrong computation's own sums may add, relative to |variant| + |answer|:
// however long the sums and low the precision, no variant O(1) away from the answer agrees with it.
constexpr double kMostOwnRounding = 0x1p-10;

// Whether `variant` reproduces the system's answer: on every compared element within the bound plus
// `own_factor`·(|variant| + |answer|) — the rounding of the wrong computation's own sums
// (check_support.h, own_rounding_factor, at most kMostOwnRounding): the bounds are built from the
// exact answer's terms, and a system computing another function rounds other sums — and, on every
// element where the system is wrong, outside the bound around the exact value and closer to the
// system's answer than the exact value is by a factor of 8 (it explains the error, not only lies
// near it).
bool reproduces(const std::vector<Compared>& compared, const Result& variant, double own_factor) {
  own_factor = std::min(own_factor, kMostOwnRounding);
  for (const Compared& c : compared) {
    const Tensor* v = find_tensor(variant, c.which);
    if (!v || v->shape() != c.exact->shape()) return false;
    for (index_t i = 0; i < v->size(); ++i) {
      const double own = own_factor * (std::abs((*v)[i]) + std::abs((*c.got)[i]));
      if (!within((*v)[i], (*c.got)[i], (*c.bound)[i] + (std::isfinite(own) ? own : 0.0))) return false;
      const double error = std::abs((*c.got)[i] - (*c.exact)[i]), distance = std::abs((*v)[i] - (*c.got)[i]);
      if (c.wrong[static_cast<size_t>(i)] && std::isfinite(error) && std::isfinite(distance) && distance > error / 8)
        return false;
      const double low = c.lowest ? (*c.lowest)[i] : NAN;
      if (c.wrong[static_cast<size_t>(i)] && !outside((*v)[i], (*c.exact)[i], (*c.bound)[i], low)) return false;
    }
  }
  return true;
}

// Where an element of a compared tensor sits on the graph.
struct Place {
  enum Kind { none, dst, src, edge } kind = none;
  index_t id = -1;      // node or edge id
  index_t column = 0;   // its column in the tensor's rows × row_size view
  index_t row_size = 1;
};

Place place_of(const Compared& c, const Graph& g, index_t flat) {
  Place p;
  p.row_size = std::max<index_t>(1, c.exact->row_size());
  const index_t row = flat / p.row_size;
  p.column = flat % p.row_size;
  switch (c.which.kind) {
    case oracle::TensorKind::dst_nodes: p.kind = Place::dst; p.id = row; break;
    case oracle::TensorKind::src_nodes: p.kind = Place::src; p.id = row; break;
    case oracle::TensorKind::edges: p.kind = Place::edge; p.id = row; break;
    case oracle::TensorKind::edges_csc: p.kind = Place::edge; p.id = g.edge_perm()[row]; break;
    case oracle::TensorKind::parameter: break;
  }
  return p;
}

// A statement about an element in graph terms: true, false, or nothing to say (nullopt).
struct Predicate {
  std::string words;  // "only rows with duplicate edges"
  std::function<std::optional<bool>(const Place&)> holds;
};

std::vector<Predicate> predicates(const Case& c) {
  const Graph& g = *c.graph;
  // Duplicates per edge: another edge with the same destination and source.
  std::vector<bool> duplicate(static_cast<size_t>(g.num_edges()), false);
  std::vector<bool> row_has_duplicate(static_cast<size_t>(g.n_dst()), false), column_has_duplicate(static_cast<size_t>(g.n_src()), false);
  std::vector<bool> self_loop_at(static_cast<size_t>(std::max(g.n_dst(), g.n_src())), false);
  for (index_t i = 0; i < g.n_dst(); ++i) {
    std::map<index_t, std::vector<index_t>> by_source;
    for (index_t e = g.row_ptr()[i]; e < g.row_ptr()[i + 1]; ++e) by_source[g.col_idx()[e]].push_back(e);
    for (const auto& [j, edges] : by_source) {
      if (j == i) self_loop_at[static_cast<size_t>(i)] = true;
      if (edges.size() < 2) continue;
      row_has_duplicate[static_cast<size_t>(i)] = column_has_duplicate[static_cast<size_t>(j)] = true;
      for (index_t e : edges) duplicate[static_cast<size_t>(e)] = true;
    }
  }
  const oracle::TargetDef& def = oracle::entry_of(c);
  const Attributes attrs = oracle::with_defaults(def.spec, c.attributes);
  const index_t heads = attrs.has("heads") ? attrs.get_int("heads") : 1;
  bool head_structured_nodes = false;  // node tensors of [N, H·C] (the ops with per-head edge values)
  for (const auto& slot : def.spec.inputs) head_structured_nodes = head_structured_nodes || slot.kind == oracle::TensorKind::edges;
  const auto node_degree = [&g](const Place& p) { return p.kind == Place::src ? g.out_degree(p.id) : g.in_degree(p.id); };
  const auto destination_of = [&g](const Place& p) -> std::optional<index_t> {
    if (p.kind == Place::dst) return p.id;
    if (p.kind == Place::edge) return g.row_of_edge()[p.id];
    return std::nullopt;
  };
  std::vector<Predicate> out;
  out.push_back({"only nodes whose in- and out-degree differ", [&g](const Place& p) -> std::optional<bool> {
                   if (!g.is_square() || p.kind == Place::none) return std::nullopt;
                   const index_t n = p.kind == Place::edge ? g.row_of_edge()[p.id] : p.id;
                   return g.in_degree(n) != g.out_degree(n);
                 }});
  out.push_back({"only rows with duplicate edges (and the duplicates themselves)", [=](const Place& p) -> std::optional<bool> {
                   if (p.kind == Place::dst) return row_has_duplicate[static_cast<size_t>(p.id)];
                   if (p.kind == Place::src) return column_has_duplicate[static_cast<size_t>(p.id)];
                   if (p.kind == Place::edge) return duplicate[static_cast<size_t>(p.id)];
                   return std::nullopt;
                 }});
  out.push_back({"only the last row (or column)", [&g](const Place& p) -> std::optional<bool> {
                   if (p.kind == Place::dst) return p.id == g.n_dst() - 1;
                   if (p.kind == Place::src) return p.id == g.n_src() - 1;
                   if (p.kind == Place::edge) return g.row_of_edge()[p.id] == g.n_dst() - 1;
                   return std::nullopt;
                 }});
  out.push_back({"only heads > 0", [=](const Place& p) -> std::optional<bool> {
                   if (heads < 2) return std::nullopt;
                   if (p.kind == Place::edge && p.row_size == heads) return p.column >= 1;
                   if ((p.kind == Place::dst || p.kind == Place::src) && head_structured_nodes && p.row_size % heads == 0)
                     return p.column / (p.row_size / heads) >= 1;
                   return std::nullopt;
                 }});
  out.push_back({"only nodes without edges on their side (empty rows or columns)", [=](const Place& p) -> std::optional<bool> {
                   if (p.kind != Place::dst && p.kind != Place::src) return std::nullopt;
                   return node_degree(p) == 0;
                 }});
  out.push_back({"only rows of more than 1000 edges (hubs)", [=](const Place& p) -> std::optional<bool> {
                   if (p.kind == Place::dst || p.kind == Place::src) return node_degree(p) > 1000;
                   if (const auto i = destination_of(p)) return g.in_degree(*i) > 1000;
                   return std::nullopt;
                 }});
  out.push_back({"only self-loops (and the nodes that have one)", [=, &g](const Place& p) -> std::optional<bool> {
                   if (p.kind == Place::edge) return g.row_of_edge()[p.id] == g.col_idx()[p.id];
                   if (p.kind == Place::dst || p.kind == Place::src) return self_loop_at[static_cast<size_t>(p.id)];
                   return std::nullopt;
                 }});
  out.push_back({"only the feature columns past the last multiple of 32", [](const Place& p) -> std::optional<bool> {
                   if (p.kind != Place::dst && p.kind != Place::src) return std::nullopt;
                   return p.column >= p.row_size - p.row_size % 32;
                 }});
  return out;
}

// The predicates every wrong element satisfies (those it speaks about, at least one) and some correct one does not.
std::vector<std::string> shared_by_wrong_elements(const Case& c, const std::vector<Compared>& compared) {
  std::vector<std::string> out;
  if (!c.graph) return out;
  for (const Predicate& p : predicates(c)) {
    bool spoke_on_wrong = false, all_wrong = true, some_correct_not = false;
    for (const Compared& t : compared)
      for (index_t i = 0; i < t.exact->size() && all_wrong; ++i) {
        const std::optional<bool> says = p.holds(place_of(t, *c.graph, i));
        if (!says) continue;
        if (t.wrong[static_cast<size_t>(i)]) {
          spoke_on_wrong = true;
          all_wrong = *says;
        } else if (!*says) {
          some_correct_not = true;
        }
      }
    if (spoke_on_wrong && all_wrong && some_correct_not) out.push_back(p.words);
  }
  return out;
}

// When the wrong elements of a compared tensor are one constant factor c ≠ 1 times their exact
// values — a normalization applied twice or left out, a gradient doubled, a sign flipped — says so:
// "gradient x: the wrong values are 2× the exact ones". Every wrong element must be c·exact within
// what c times a correct answer may be ((1 + |c|)·bound, and the product's rounding), the factor
// is read at the wrong element of largest |exact| (beyond its bound), and c = 0 is left to the
// zero-gradient variant. One wrong element is some factor of its exact value whatever it is: the
// sentence needs two wrong elements beyond their bounds.
std::vector<std::string> constant_factors(const std::vector<Compared>& compared) {
  std::vector<std::string> out;
  for (const Compared& t : compared) {
    index_t anchor = -1;
    for (index_t i = 0; i < t.exact->size(); ++i)
      if (t.wrong[static_cast<size_t>(i)] && std::isfinite((*t.got)[i]) &&
          std::abs((*t.exact)[i]) > (*t.bound)[i] && (anchor < 0 || std::abs((*t.exact)[i]) > std::abs((*t.exact)[anchor])))
        anchor = i;
    index_t witnesses = 0;
    for (index_t i = 0; i < t.exact->size(); ++i)
      witnesses += t.wrong[static_cast<size_t>(i)] && std::abs((*t.exact)[i]) > (*t.bound)[i] ? 1 : 0;
    if (anchor < 0 || witnesses < 2) continue;
    const double factor = (*t.got)[anchor] / (*t.exact)[anchor];
    if (!std::isfinite(factor) || std::abs(factor) < 1e-3) continue;
    bool all = true;
    for (index_t i = 0; i < t.exact->size() && all; ++i) {
      if (!t.wrong[static_cast<size_t>(i)]) continue;
      const double got = (*t.got)[i], scaled = factor * (*t.exact)[i];
      all = std::isfinite(got) && std::abs(got - scaled) <= (1.0 + std::abs(factor)) * (*t.bound)[i] + 0x1p-20 * std::abs(got);
    }
    if (all) out.push_back(fmt::format("{}: the wrong values are {:.4g}× the exact ones (one constant factor: a "
                                       "normalization or scale applied twice or left out, or a sign flipped)",
                                       t.which.label, factor));
  }
  return out;
}

// Where the case ties (a max or min whose candidates are equal within rounding) and every wrong
// element is a gradient element a tied candidate receives: says so, and how many ties gave the
// whole output gradient to every candidate (their gradients, less the rest of the gradient, sum to
// the candidates' count times one candidate's share) rather than one convex combination of it.
std::vector<std::string> tie_findings(const Case& c, const std::vector<Compared>& compared, Precision precision) {
  const oracle::TargetDef& def = oracle::entry_of(c);
  if (!def.subgradients || !def.kinks.ties || c.grad_outputs.empty()) return {};
  const oracle::SubgradientChoices set = def.subgradients(c, unit_roundoff(precision));
  if (set.groups.empty()) return {};
  std::set<std::pair<std::string, index_t>> at_ties;
  for (const oracle::TieGroup& group : set.groups)
    for (const oracle::TieAlternative& a : group.alternatives)
      for (const oracle::GradientTerm& term : a.terms) at_ties.insert({term.input, term.flat_index});
  std::map<std::string, const Compared*> gradient_of;
  bool any_wrong = false;
  for (const Compared& t : compared)
    for (index_t i = 0; i < t.exact->size(); ++i) {
      if (!t.wrong[static_cast<size_t>(i)]) continue;
      if (!t.which.is_gradient || !at_ties.count({t.which.name, i})) return {};
      any_wrong = true;
      gradient_of[t.which.name] = &t;
    }
  if (!any_wrong) return {};
  std::vector<std::string> out{fmt::format("only gradient elements at the case's {} ties of a max or min (where any "
                                           "convex combination of the tied candidates is valid)",
                                           set.groups.size())};
  // A tie "copied": every candidate received its whole share. Read where each candidate has one term.
  std::size_t copied = 0, judged = 0;
  for (const oracle::TieGroup& group : set.groups) {
    bool single_terms = true, all_full = true, any_wrong_here = false;
    for (const oracle::TieAlternative& a : group.alternatives) {
      if (a.terms.size() != 1) { single_terms = false; break; }
      const oracle::GradientTerm& term = a.terms.front();
      const auto it = gradient_of.find(term.input);
      const auto base = set.base.find(term.input);
      if (it == gradient_of.end() || base == set.base.end()) { single_terms = false; break; }
      const Compared& t = *it->second;
      const double got = (*t.got)[term.flat_index] - base->second[term.flat_index];
      any_wrong_here = any_wrong_here || t.wrong[static_cast<size_t>(term.flat_index)];
      all_full = all_full && term.value != 0 &&
                 std::abs(got - term.value) <= (*t.bound)[term.flat_index] + 0x1p-20 * std::abs(term.value);
    }
    if (!single_terms || !any_wrong_here) continue;
    ++judged;
    if (all_full) ++copied;
  }
  if (copied > 0)
    out.push_back(fmt::format("at {} of the {} ties with a wrong element every tied candidate received the whole "
                              "output gradient: the gradient copied to every tied entry instead of shared among them "
                              "(the tie_gradient_copied bug class)",
                              copied, judged));
  return out;
}

std::string diagnosis_text(const Diagnosis& d) {
  if (d.matched) {
    std::string text = fmt::format("Diagnosis: matches: {} (variant {}, bug class {}", d.description, d.variant, d.bug_class);
    if (!d.also_matching.empty()) text += fmt::format("; also matching: {}", fmt::join(d.also_matching, ", "));
    if (!d.ruled_out_as_drawn.empty())
      text += fmt::format("; fits the case as drawn too, which {} do not", fmt::join(d.ruled_out_as_drawn, ", "));
    return text + ").";
  }
  std::string text = fmt::format("Diagnosis: no known variant matches ({} of the target's variants tried{})", d.variants_tried,
                                 d.stopped_at_budget ? fmt::format(", stopped at the {:g} s budget", kBudgetSeconds) : "");
  if (d.shared.empty()) return text + "; the wrong elements share no property gnncheck looks for.";
  return text + fmt::format("; the wrong elements share: {}.", fmt::join(d.shared, "; "));
}

}  // namespace

std::optional<Case> compared_case(CheckKind kind, const Case& c, const CheckOptions& options) {
  switch (kind) {
    case CheckKind::op_order: return with_degree_asymmetry(c);
    case CheckKind::numerics: return with_large_inputs(c, options.numerics_magnitude);
    default: return c;
  }
}

std::optional<Diagnosis> diagnose_answer(const Case& c, const Result& answer, const Formats& formats,
                                         const std::vector<oracle::WrongVariant>& extra, const CheckOptions& options,
                                         const Case* previous) {
  const auto start = std::chrono::steady_clock::now();
  if (!answer.ok()) return std::nullopt;
  const oracle::TargetDef& def = oracle::entry_of(c);
  const Result exact = oracle::evaluate(c, Precision::float64);
  if (!exact.ok()) return std::nullopt;
  const Precision precision = formats.storage;
  const Bounds bounds = ToleranceModel(options.tolerance).bounds(c, exact, formats);
  Verdict scratch;
  scratch.precision = precision;
  scratch.accumulation = formats.accumulation;
  compare_with_exact(scratch, def.spec, exact, answer, bounds);
  // At ties the gradients are held to the valid gradient nearest the answer, not to the oracle's choice.
  const std::optional<SubgradientDecision> ties = decide_at_ties(def, c, answer, bounds, precision);
  if (ties) compare_gradients_at_valid_subgradients(scratch, *ties, answer, bounds);
  screen_kinks(scratch, c);

  // The elements compared: every tensor whose comparison is conclusive, with the wrong ones marked.
  std::vector<Compared> compared;
  bool any_wrong = false;
  for (const NamedTensor& nt : result_tensors(def.spec, exact)) {
    const auto it = std::find_if(scratch.comparisons.begin(), scratch.comparisons.end(),
                                 [&](const TensorComparison& tc) { return tc.tensor == nt.label; });
    if (it != scratch.comparisons.end() && it->inconclusive()) continue;
    const Tensor* reference = find_tensor(exact, nt);
    if (ties && nt.is_gradient && ties->nearest.count(nt.name)) reference = &ties->nearest.at(nt.name);
    Compared t{nt, reference, find_tensor(answer, nt), &bounds.tensors.at(nt.label), bounds.lowest_of(nt.label), {}};
    if (!t.got || t.got->shape() != t.exact->shape()) return std::nullopt;  // nothing element-wise to match
    t.wrong.resize(static_cast<size_t>(t.exact->size()));
    for (index_t i = 0; i < t.exact->size(); ++i) {
      const double low = t.lowest ? (*t.lowest)[i] : NAN;
      t.wrong[static_cast<size_t>(i)] = outside((*t.got)[i], (*t.exact)[i], (*t.bound)[i], low);
      any_wrong = any_wrong || t.wrong[static_cast<size_t>(i)];
    }
    compared.push_back(std::move(t));
  }
  if (!any_wrong) return std::nullopt;

  std::vector<const oracle::WrongVariant*> variants;
  for (const auto& v : def.wrong_variants) variants.push_back(&v);
  for (const auto& v : extra) variants.push_back(&v);
  std::stable_sort(variants.begin(), variants.end(),
                   [](const oracle::WrongVariant* a, const oracle::WrongVariant* b) { return a->simplicity < b->simplicity; });
  Diagnosis d;
  for (const oracle::WrongVariant* v : variants) {
    // A failure on a large fixed graph is not shrunk: the diagnosis stops at its budget.
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > kBudgetSeconds) {
      d.stopped_at_budget = true;
      break;
    }
    std::optional<Result> wrong;
    try {
      wrong = v->evaluate(c, {.precision = precision, .previous = previous});
    } catch (const std::exception&) {  // a variant that cannot be formed on this case does not apply
      continue;
    }
    if (!wrong || !wrong->ok()) continue;
    ++d.variants_tried;
    if (!reproduces(compared, *wrong, own_rounding_factor(c, precision, options))) continue;
    if (std::find(d.matching_classes.begin(), d.matching_classes.end(), v->bug_class) == d.matching_classes.end())
      d.matching_classes.push_back(v->bug_class);
    if (!d.matched) {
      d.matched = true;
      d.variant = v->name;
      d.bug_class = v->bug_class;
      d.description = v->description;
    } else if (std::find(d.also_matching.begin(), d.also_matching.end(), v->name) == d.also_matching.end()) {
      d.also_matching.push_back(v->name);
    }
  }
  if (!d.matched) {
    d.shared = shared_by_wrong_elements(c, compared);
    for (std::string& finding : tie_findings(c, compared, precision)) d.shared.push_back(std::move(finding));
    for (std::string& factor : constant_factors(compared)) d.shared.push_back(std::move(factor));
  }
  d.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  d.text = diagnosis_text(d);
  return d;
}

namespace {

// The matches of `d` that also fit `witness` (the case as drawn): kept in d's order, the simplest
// named; d unchanged when the witness keeps them all or none.
void narrow_by_witness(Diagnosis& d, System& system, CheckKind kind, const Case& witness,
                       const std::vector<oracle::WrongVariant>& extra, const CheckOptions& options) {
  if (!d.matched || d.also_matching.empty() || kind == CheckKind::state_interleaved) return;
  const std::optional<Case> c = compared_case(kind, witness, options);
  if (!c) return;
  std::optional<Diagnosis> there;
  try {
    there = diagnose_answer(*c, system.evaluate(*c), {system.precision(c->target), system.accumulation(c->target)}, extra,
                            options, nullptr);
  } catch (const std::exception&) {
    return;
  }
  if (!there || !there->matched) return;
  std::vector<std::string> fits{there->variant};
  fits.insert(fits.end(), there->also_matching.begin(), there->also_matching.end());
  std::vector<std::string> matches{d.variant};
  matches.insert(matches.end(), d.also_matching.begin(), d.also_matching.end());
  std::vector<std::string> kept, ruled_out;
  for (const auto& name : matches) (std::find(fits.begin(), fits.end(), name) != fits.end() ? kept : ruled_out).push_back(name);
  if (kept.empty() || ruled_out.empty()) return;
  // The named variant is the simplest that fits both; the classes are those of the variants kept.
  const auto& own = oracle::entry_of(witness).wrong_variants;
  const auto variant_named = [&](const std::string& name) -> const oracle::WrongVariant* {
    for (const auto* list : {&own, &extra})
      for (const auto& v : *list)
        if (v.name == name) return &v;
    return nullptr;
  };
  std::vector<std::string> classes;
  for (const auto& name : kept) {
    const oracle::WrongVariant* v = variant_named(name);
    if (!v) return;  // a variant unknown here: keep the minimal case's own diagnosis
    if (std::find(classes.begin(), classes.end(), v->bug_class) == classes.end()) classes.push_back(v->bug_class);
  }
  d.matching_classes = classes;
  const oracle::WrongVariant* named = variant_named(kept.front());
  d.variant = named->name;
  d.bug_class = named->bug_class;
  d.description = named->description;
  d.also_matching.assign(kept.begin() + 1, kept.end());
  d.ruled_out_as_drawn = ruled_out;
  d.text = diagnosis_text(d);
}

}  // namespace

std::optional<Diagnosis> diagnose_failure(CheckKind kind, System& system, const Case& counterexample,
                                          const std::vector<oracle::WrongVariant>& extra, const CheckOptions& options,
                                          const std::optional<Case>& as_drawn) {
  const auto start = std::chrono::steady_clock::now();
  std::optional<Case> c = compared_case(kind, counterexample, options);
  if (!c) return std::nullopt;
  Result answer;
  std::optional<Case> previous;  // state_interleaved: A's answer right after B's forward
  try {
    if (kind == CheckKind::state_interleaved) {
      const StateCases s = state_interleaved_cases(counterexample);
      for (const Case* k : {&s.a, &s.a_forward, &s.b_forward})
        if (!system.evaluate(*k).ok()) return std::nullopt;
      c = s.a;
      previous = s.b_forward;
    }
    answer = system.evaluate(*c);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  std::optional<Diagnosis> d =
      diagnose_answer(*c, answer, {system.precision(c->target), system.accumulation(c->target)}, extra, options,
                      previous ? &*previous : nullptr);
  if (d && as_drawn) narrow_by_witness(*d, system, kind, *as_drawn, extra, options);
  if (d) d->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return d;
}

}  // namespace gnncheck::checks
