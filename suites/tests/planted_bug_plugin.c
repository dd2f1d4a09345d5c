/* The example SpMM plugin with one planted bug, for the tests of what a user sees when a plugin's
 * backward is wrong: spmm's grad_x comes out doubled (or, with PLANTED_NAN_ON_EMPTY_ROWS, its forward
 * is NaN on empty rows). Everything else is the example's own code. */
#define gnncheck_plugin_v1 example_entry_point
#include "../../examples/plugin/spmm_plugin.c"
#undef gnncheck_plugin_v1

#ifdef PLANTED_NAN_ON_EMPTY_ROWS
/* Built as gnncheck_test_nan_plugin: spmm's forward writes 0/0 into every row with no in-edges, as a
 * fused kernel that normalizes by the row's edge count without guarding an empty row. */
static int evaluate_with_bug(const gnncheck_case* c, char* error, int64_t error_capacity, int64_t* peak_bytes) {
  const int status = evaluate(c, error, error_capacity, peak_bytes);
  if (status != GNNCHECK_OK || strcmp(c->target, "spmm") != 0) return status;
  gnncheck_tensor* y = &c->outputs[0];
  const int64_t width = row_size(y);
  volatile float zero = 0.0f;
  for (int64_t i = 0; i < c->graph->n_dst; ++i)
    if (c->graph->row_ptr[i + 1] == c->graph->row_ptr[i])
      for (int64_t f = 0; f < width; ++f) ((float*)y->data)[i * width + f] = zero / zero;
  return status;
}
#else
static int evaluate_with_bug(const gnncheck_case* c, char* error, int64_t error_capacity, int64_t* peak_bytes) {
  const int status = evaluate(c, error, error_capacity, peak_bytes);
  if (status != GNNCHECK_OK || strcmp(c->target, "spmm") != 0 || c->num_grad_outputs == 0) return status;
  gnncheck_tensor* grad_x = (gnncheck_tensor*)find_tensor(c->gradients, c->num_gradients, "x");
  int64_t n = 1;
  for (int64_t d = 0; d < grad_x->rank; ++d) n *= grad_x->shape[d];
  for (int64_t k = 0; k < n; ++k) ((float*)grad_x->data)[k] *= 2.0f;
  return status;
}
#endif

static const gnncheck_plugin kBuggy = {GNNCHECK_PLUGIN_ABI_VERSION, "planted_bug_spmm", 2, kTargets, evaluate_with_bug};

GNNCHECK_PLUGIN_EXPORT const gnncheck_plugin* gnncheck_plugin_v1(void) {
  (void)example_entry_point;
  return &kBuggy;
}
