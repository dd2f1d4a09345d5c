// A C++ consumer of the installed vocabulary: a System written against core/system.h, linked with
// gnncheck::core, evaluating one case. Its test passes when the System answers the case it was given.
#include <cstdio>
#include <memory>
#include <vector>

#include "core/system.h"

namespace {

// Y = A·X on a CSR graph, forward only: enough to show the interface from outside the tree.
class SumOfNeighbours final : public gnncheck::System {
 public:
  std::string name() const override { return "sum_of_neighbours"; }
  bool supports(const std::string& target) const override { return target == "spmm"; }
  gnncheck::Precision precision(const std::string&) const override { return gnncheck::Precision::float64; }
  gnncheck::Result evaluate(const gnncheck::Case& c) override {
    const gnncheck::Graph& g = *c.graph;
    const gnncheck::Tensor& x = c.inputs.at("x");
    gnncheck::Tensor y(gnncheck::shape_with_rows(x, g.n_dst()));
    for (gnncheck::index_t i = 0; i < g.n_dst(); ++i)
      for (gnncheck::index_t e = g.row_ptr()[i]; e < g.row_ptr()[i + 1]; ++e)
        for (gnncheck::index_t k = 0; k < x.row_size(); ++k) y.at(i, k) += x.at(g.col_idx()[e], k);
    gnncheck::Result r;
    r.outputs["y"] = std::move(y);
    return r;
  }
};

}  // namespace

int main() {
  const std::vector<gnncheck::index_t> dst{0, 0, 1}, src{0, 1, 1};
  gnncheck::Case c;
  c.target = "spmm";
  c.graph = std::make_shared<const gnncheck::Graph>(gnncheck::Graph::from_edges(2, 2, dst, src));
  c.inputs["x"] = gnncheck::Tensor({2, 1}, std::vector<double>{1.0, 2.0});
  SumOfNeighbours system;
  const gnncheck::Result r = system.evaluate(c);
  const bool right = r.ok() && r.outputs.at("y")[0] == 3.0 && r.outputs.at("y")[1] == 2.0;
  std::printf("%s on %s: %s\n", system.name().c_str(), c.graph->summary().c_str(), right ? "as expected" : "WRONG");
  return right ? 0 : 1;
}
