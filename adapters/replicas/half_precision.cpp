// Half-precision storage with float32 sums; see half_precision.h.
#include "adapters/replicas/half_precision.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "oracle/random_case.h"
#include "oracle/targets.h"

namespace gnncheck {
namespace {

class HalfStorageSystem final : public System {
 public:
  explicit HalfStorageSystem(Precision storage) : storage_(storage) {}
  std::string name() const override { return fmt::format("cpu_{}_float32_sums", to_string(storage_)); }
  bool supports(const std::string& target) const override {
    for (const auto& def : oracle::all_targets())
      if (def.spec.name == target) return true;
    return false;
  }
  Precision precision(const std::string&) const override { return storage_; }
  Precision accumulation(const std::string&) const override { return Precision::float32; }
  Result evaluate(const Case& c) override {
    Case stored = c;
    oracle::store_values_in(stored, storage_);
    Result r = oracle::evaluate(stored, Precision::float32);
    if (!r.ok()) return r;
    for (TensorMap* m : {&r.outputs, &r.gradients})
      for (auto& [name, t] : *m) t = rounded(t, storage_);
    return r;
  }

 private:
  Precision storage_;
};

// One sum as the kernel forms it: each term (a stored value or a product of two) and each partial
// sum rounded to the accumulation format.
class Sum {
 public:
  explicit Sum(Precision accumulation) : format_(accumulation) {}
  void add(double term) { value_ = round_to_precision(value_ + round_to_precision(term, format_), format_); }
  double stored() const { return round_to_precision(value_, Precision::float16); }

 private:
  Precision format_;
  double value_ = 0.0;
};

Tensor stored(const Tensor& t) { return rounded(t, Precision::float16); }

// Σ over the in-edges of every destination row (CSR) of term(e, column), or over the out-edges of
// every source (CSC, e the edge id) — the two directions of every kernel below.
template <class Term>
Tensor rows_sum(const Graph& g, index_t width, Precision accumulation, Term term) {
  Tensor out({g.n_dst(), width});
  for (index_t i = 0; i < g.n_dst(); ++i)
    for (index_t f = 0; f < width; ++f) {
      Sum s(accumulation);
      for (index_t e = g.row_ptr()[i]; e < g.row_ptr()[i + 1]; ++e) s.add(term(e, f));
      out.at(i, f) = s.stored();
    }
  return out;
}

template <class Term>
Tensor columns_sum(const Graph& g, index_t width, Precision accumulation, Term term) {
  Tensor out({g.n_src(), width});
  for (index_t j = 0; j < g.n_src(); ++j)
    for (index_t f = 0; f < width; ++f) {
      Sum s(accumulation);
      for (index_t p = g.col_ptr()[j]; p < g.col_ptr()[j + 1]; ++p) s.add(term(g.edge_perm()[p], f));
      out.at(j, f) = s.stored();
    }
  return out;
}

class HalfKernelSystem final : public System {
 public:
  std::string name() const override { return "spmm_float16_float32_sums"; }
  bool supports(const std::string& target) const override {
    const auto& t = half_kernel_targets();
    return std::find(t.begin(), t.end(), target) != t.end();
  }
  Precision precision(const std::string&) const override { return Precision::float16; }
  Precision accumulation(const std::string&) const override { return Precision::float32; }
  Result evaluate(const Case& c) override { return half_sparse_kernel(c, Precision::float32); }
};

}  // namespace

std::unique_ptr<System> make_half_storage_system(Precision storage) {
  return std::make_unique<HalfStorageSystem>(storage);
}

const std::vector<std::string>& half_kernel_targets() {
  static const std::vector<std::string> targets = {"spmm", "spmm_transposed", "spmm_ve", "sddmm_dot"};
  return targets;
}

std::unique_ptr<System> make_half_kernel_system() { return std::make_unique<HalfKernelSystem>(); }

Result half_sparse_kernel(const Case& c, Precision accumulation) {
  Result r;
  const auto& targets = half_kernel_targets();
  if (std::find(targets.begin(), targets.end(), c.target) == targets.end() || !c.graph) {
    r.status = Status::unsupported;
    r.message = fmt::format("the float16 sparse kernels compute {}; not '{}'", fmt::join(targets, ", "), c.target);
    return r;
  }
  const Graph& g = *c.graph;
  const Precision a = accumulation;
  const bool backward = !c.grad_outputs.empty();
  const Attributes attrs = oracle::with_defaults(oracle::entry_of(c).spec, c.attributes);
  if (c.target == "spmm" || c.target == "spmm_transposed") {
    const bool plain = c.target == "spmm";
    const Tensor x = stored(c.inputs.at(plain ? "x" : "y"));
    const index_t w = x.row_size();
    auto gather_rows = [&](const Tensor& t) { return rows_sum(g, w, a, [&](index_t e, index_t f) { return t.at(g.col_idx()[e], f); }); };
    auto gather_columns = [&](const Tensor& t) {
      return columns_sum(g, w, a, [&](index_t e, index_t f) { return t.at(g.row_of_edge()[e], f); });
    };
    r.outputs[plain ? "y" : "z"] = plain ? gather_rows(x) : gather_columns(x);
    if (backward) {
      const Tensor gy = stored(c.grad_outputs.at(plain ? "y" : "z"));
      r.gradients[plain ? "x" : "y"] = plain ? gather_columns(gy) : gather_rows(gy);
    }
    return r;
  }
  const index_t heads = attrs.get_int("heads"), channels = attrs.get_int("features");
  if (c.target == "spmm_ve") {
    const Tensor w = stored(c.inputs.at("edge_values")), x = stored(c.inputs.at("x"));
    r.outputs["y"] = rows_sum(g, heads * channels, a, [&](index_t e, index_t f) {
      return w.at(e, f / channels) * x.at(g.col_idx()[e], f);
    });
    if (backward) {
      const Tensor gy = stored(c.grad_outputs.at("y"));
      Tensor gw({g.num_edges(), heads});
      for (index_t e = 0; e < g.num_edges(); ++e)
        for (index_t h = 0; h < heads; ++h) {
          Sum s(a);
          for (index_t k = 0; k < channels; ++k)
            s.add(gy.at(g.row_of_edge()[e], h * channels + k) * x.at(g.col_idx()[e], h * channels + k));
          gw.at(e, h) = s.stored();
        }
      r.gradients["edge_values"] = std::move(gw);
      r.gradients["x"] = columns_sum(g, heads * channels, a, [&](index_t e, index_t f) {
        return w.at(e, f / channels) * gy.at(g.row_of_edge()[e], f);
      });
    }
    return r;
  }
  // sddmm_dot
  const Tensor u = stored(c.inputs.at("u")), v = stored(c.inputs.at("v"));
  Tensor out({g.num_edges(), heads});
  for (index_t e = 0; e < g.num_edges(); ++e)
    for (index_t h = 0; h < heads; ++h) {
      Sum s(a);
      for (index_t k = 0; k < channels; ++k)
        s.add(u.at(g.row_of_edge()[e], h * channels + k) * v.at(g.col_idx()[e], h * channels + k));
      out.at(e, h) = s.stored();
    }
  r.outputs["e"] = std::move(out);
  if (backward) {
    const Tensor ge = stored(c.grad_outputs.at("e"));
    r.gradients["u"] = rows_sum(g, heads * channels, a, [&](index_t e, index_t f) {
      return ge.at(e, f / channels) * v.at(g.col_idx()[e], f);
    });
    r.gradients["v"] = columns_sum(g, heads * channels, a, [&](index_t e, index_t f) {
      return ge.at(e, f / channels) * u.at(g.row_of_edge()[e], f);
    });
  }
  return r;
}

}  // namespace gnncheck
