/* The example SpMM plugin with one planted bug, for the tests of what a user sees when a plugin's
 * backward is wrong: spmm's grad_x comes out doubled. Everything else is the example's own code. */
#define gnncheck_plugin_v1 example_entry_point
#include "../../examples/plugin/spmm_plugin.c"
#undef gnncheck_plugin_v1

static int evaluate_with_bug(const gnncheck_case* c, char* error, int64_t error_capacity, int64_t* peak_bytes) {
  const int status = evaluate(c, error, error_capacity, peak_bytes);
  if (status != GNNCHECK_OK || strcmp(c->target, "spmm") != 0 || c->num_grad_outputs == 0) return status;
  gnncheck_tensor* grad_x = (gnncheck_tensor*)find_tensor(c->gradients, c->num_gradients, "x");
  int64_t n = 1;
  for (int64_t d = 0; d < grad_x->rank; ++d) n *= grad_x->shape[d];
  for (int64_t k = 0; k < n; ++k) ((float*)grad_x->data)[k] *= 2.0f;
  return status;
}

static const gnncheck_plugin kBuggy = {GNNCHECK_PLUGIN_ABI_VERSION, "planted_bug_spmm", 2, kTargets, evaluate_with_bug};

GNNCHECK_PLUGIN_EXPORT const gnncheck_plugin* gnncheck_plugin_v1(void) {
  (void)example_entry_point;
  return &kBuggy;
}
