#include "oracle/typed_rows_target.h"

#include "oracle/broadcast_operands.h"
#include "oracle/catalogue_support.h"
#include "oracle/gather_mm.h"
#include "oracle/wrong_variants.h"

namespace gnncheck::oracle {

using namespace catalogue;

TargetDef typed_rows_target(TargetSpec spec, TypedRows rows) {
  struct Widths {
    index_t types, in, out;
  };
  const std::string name = spec.name;
  const auto widths = [name, count = rows.type_count](const Attributes& a) {
    return Widths{positive_size(a, name, count.c_str()), positive_size(a, name, "in_features"),
                  positive_size(a, name, "out_features")};
  };
  TargetDef def = make_target(
      std::move(spec),
      [widths, rows](const Graph& g, const Attributes& a) {
        const Widths n = widths(a);
        const index_t r = rows.rows(g);
        return Shapes{{"x", {r, n.in}}, {rows.types, {r}}, {"weight", {n.types, n.in, n.out}}};
      },
      [widths, rows](const Graph& g, const Attributes& a) { return Shapes{{"y", {rows.rows(g), widths(a).out}}}; },
      [types_name = rows.types]<class T>(const Graph&, const Attributes&, const TensorMapOf<T>& in,
                                         const TensorMapOf<T>& gout) {
        Evaluation<T> ev;
        const auto& x = get(in, "x");
        const auto& types = get(in, types_name.c_str());
        const auto& weight = get(in, "weight");
        ev.outputs["y"] = gather_mm_forward(x, types, weight);
        if (!gout.empty()) {
          auto grads = gather_mm_backward(x, types, weight, get(gout, "y"));
          ev.gradients["x"] = std::move(grads.grad_x);
          ev.gradients["weight"] = std::move(grads.grad_w);
        }
        return ev;
      });
  // Every element is a sum of products of two values (x·weight; grad_y·weight with k = out_features
  // for grad_x; x·grad_y with k = the type's rows for grad_weight): the target on |inputs| is
  // Σ|terms| and on ones (the types kept) the term count.
  def.spec.tolerance = {ToleranceKind::closed_form, 3, "both factors rounded, their product"};
  def.spec.tolerance.storage_roundings = 2;  // the two factors; the product in the accumulation format
  def.wrong_variants = {weight_gradient_to_next_relation(), weight_not_transposed_in_backward(rows.types),
                        rows_left_sorted_by_type(rows.types)};
  def.spec.gpu = {.device_resident = true, .reads_edge_perm = false};
  return def;
}

}  // namespace gnncheck::oracle
