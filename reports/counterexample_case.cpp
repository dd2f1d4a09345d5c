#include "reports/counterexample_case.h"

#include "oracle/targets.h"

namespace gnncheck::reports {
namespace {

// True when `label` names `prefix + name` as a whole word ("gradient x", not "gradient x_src").
bool names(const std::string& label, const std::string& prefix, const std::string& name) {
  const std::string word = prefix + name;
  for (std::size_t at = label.find(word); at != std::string::npos; at = label.find(word, at + 1)) {
    const bool starts = at == 0 || label[at - 1] == ' ';
    const std::size_t end = at + word.size();
    const bool ends = end == label.size() || label[end] == ' ';
    if (starts && ends) return true;
  }
  return false;
}

void place_on_graph(const Graph& g, const std::string& target, CounterexampleElement& e) {
  e.place = ElementPlace::none;
  e.mark = -1;
  if (e.index.empty()) return;  // a scalar over the whole case
  std::optional<oracle::TensorKind> kind;
  try {
    const oracle::TargetSpec& spec = oracle::find_target(target).spec;
    for (const auto& slot : spec.outputs)
      if (names(e.tensor, "output ", slot.name)) kind = slot.kind;
    for (const auto& slot : spec.inputs)
      if (names(e.tensor, "gradient ", slot.name)) kind = slot.kind;
  } catch (const std::exception&) {
    return;  // not a catalogue target
  }
  if (!kind) return;
  const std::int64_t row = e.index.front();
  const bool edge_row = row >= 0 && row < g.num_edges();
  auto mark = [&](ElementPlace place, std::int64_t id) {
    e.place = place;
    e.mark = id;
  };
  switch (*kind) {
    case oracle::TensorKind::dst_nodes:
      if (row >= 0 && row < g.n_dst()) mark(ElementPlace::destination, row);
      break;
    case oracle::TensorKind::src_nodes:
      if (row >= 0 && row < g.n_src()) mark(ElementPlace::source, row);
      break;
    case oracle::TensorKind::edges:
      if (edge_row) mark(ElementPlace::edge, row);
      break;
    case oracle::TensorKind::edges_csc:
      if (edge_row) mark(ElementPlace::edge, g.edge_perm()[row]);
      break;
    case oracle::TensorKind::parameter: break;
  }
}

}  // namespace

CounterexampleCase describe_counterexample(const Graph& g, const std::string& target,
                                           std::optional<CounterexampleElement> element) {
  CounterexampleCase out;
  out.n_dst = g.n_dst();
  out.n_src = g.n_src();
  out.n_edges = g.num_edges();
  if (out.n_edges <= CounterexampleCase::kMaxRecordedEdges) {
    const auto row_of_edge = g.row_of_edge();
    const auto col_idx = g.col_idx();
    for (std::int64_t e = 0; e < out.n_edges; ++e) out.edges.emplace_back(row_of_edge[e], col_idx[e]);
  }
  if (element) place_on_graph(g, target, *element);
  out.element = std::move(element);
  return out;
}

}  // namespace gnncheck::reports
