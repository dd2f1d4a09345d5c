/* A complete gnncheck plugin: sum-of-neighbors SpMM and its transpose, forward and backward, written
 * by hand for the CPU in float32. Start your own plugin from this file.
 *
 *   spmm:             y = A·x     y[i,:] = Σ_{e ∈ row i} x[col_e,:]       backward: grad_x = Aᵀ·grad_y
 *   spmm_transposed:  z = Aᵀ·y    z[j,:] = Σ_{e : col_e = j} y[row_e,:]   backward: grad_y = A·grad_z
 *
 * The transposed products scatter over the edges in edge-id order instead of building Aᵀ.
 * Build: see CMakeLists.txt next to this file. Check: gnncheck run --plugin ./libgnncheck_example_spmm.so
 */
#include <stdio.h>
#include <string.h>

#include "gnncheck/plugin.h"

static const gnncheck_tensor* find_tensor(const gnncheck_tensor* list, int64_t count, const char* name) {
  for (int64_t k = 0; k < count; ++k)
    if (strcmp(list[k].name, name) == 0) return &list[k];
  return NULL;
}

/* Values per row: the product of every dimension after the first. */
static int64_t row_size(const gnncheck_tensor* t) {
  int64_t n = 1;
  for (int64_t d = 1; d < t->rank; ++d) n *= t->shape[d];
  return n;
}

/* out[i,:] = Σ_{e ∈ row i} in[col_e,:]  (A·in, gathering along each row) */
static void gather_rows(const gnncheck_graph* g, const float* in, int64_t width, float* out) {
  for (int64_t i = 0; i < g->n_dst; ++i) {
    float* out_row = out + i * width;
    for (int64_t f = 0; f < width; ++f) out_row[f] = 0.0f;
    for (int64_t e = g->row_ptr[i]; e < g->row_ptr[i + 1]; ++e) {
      const float* in_row = in + g->col_idx[e] * width;
      for (int64_t f = 0; f < width; ++f) out_row[f] += in_row[f];
    }
  }
}

/* out[j,:] = Σ_{e : col_e = j} in[row_e,:]  (Aᵀ·in, scattering every edge to its source) */
static void scatter_columns(const gnncheck_graph* g, const float* in, int64_t width, float* out) {
  for (int64_t k = 0; k < g->n_src * width; ++k) out[k] = 0.0f;
  for (int64_t i = 0; i < g->n_dst; ++i) {
    const float* in_row = in + i * width;
    for (int64_t e = g->row_ptr[i]; e < g->row_ptr[i + 1]; ++e) {
      float* out_row = out + g->col_idx[e] * width;
      for (int64_t f = 0; f < width; ++f) out_row[f] += in_row[f];
    }
  }
}

static int fail(char* error, int64_t capacity, int status, const char* message) {
  snprintf(error, (size_t)capacity, "%s", message);
  return status;
}

static int evaluate(const gnncheck_case* c, char* error, int64_t error_capacity, int64_t* peak_bytes) {
  (void)peak_bytes; /* no allocations of its own */
  const int forward_only = c->num_grad_outputs == 0;
  if (c->num_outputs != 1 || c->outputs[0].dtype != GNNCHECK_FLOAT32)
    return fail(error, error_capacity, GNNCHECK_ERROR, "expected one float32 output");
  gnncheck_tensor* out = &c->outputs[0];
  const int64_t width = row_size(out);
  if (strcmp(c->target, "spmm") == 0) {
    const gnncheck_tensor* x = find_tensor(c->inputs, c->num_inputs, "x");
    if (!x) return fail(error, error_capacity, GNNCHECK_ERROR, "spmm: input 'x' missing");
    gather_rows(c->graph, (const float*)x->data, width, (float*)out->data);
    if (!forward_only) {
      const gnncheck_tensor* grad_y = find_tensor(c->grad_outputs, c->num_grad_outputs, "y");
      gnncheck_tensor* grad_x = (gnncheck_tensor*)find_tensor(c->gradients, c->num_gradients, "x");
      if (!grad_y || !grad_x) return fail(error, error_capacity, GNNCHECK_ERROR, "spmm: gradient tensors missing");
      scatter_columns(c->graph, (const float*)grad_y->data, width, (float*)grad_x->data);
    }
    return GNNCHECK_OK;
  }
  if (strcmp(c->target, "spmm_transposed") == 0) {
    const gnncheck_tensor* y = find_tensor(c->inputs, c->num_inputs, "y");
    if (!y) return fail(error, error_capacity, GNNCHECK_ERROR, "spmm_transposed: input 'y' missing");
    scatter_columns(c->graph, (const float*)y->data, width, (float*)out->data);
    if (!forward_only) {
      const gnncheck_tensor* grad_z = find_tensor(c->grad_outputs, c->num_grad_outputs, "z");
      gnncheck_tensor* grad_y = (gnncheck_tensor*)find_tensor(c->gradients, c->num_gradients, "y");
      if (!grad_z || !grad_y)
        return fail(error, error_capacity, GNNCHECK_ERROR, "spmm_transposed: gradient tensors missing");
      gather_rows(c->graph, (const float*)grad_z->data, width, (float*)grad_y->data);
    }
    return GNNCHECK_OK;
  }
  return fail(error, error_capacity, GNNCHECK_UNSUPPORTED, "this plugin computes spmm and spmm_transposed only");
}

static const gnncheck_target_decl kTargets[] = {
    {"spmm", GNNCHECK_PRECISION_FLOAT32},
    {"spmm_transposed", GNNCHECK_PRECISION_FLOAT32},
};

static const gnncheck_plugin kPlugin = {GNNCHECK_PLUGIN_ABI_VERSION, "example_spmm", 2, kTargets, evaluate};

GNNCHECK_PLUGIN_EXPORT const gnncheck_plugin* gnncheck_plugin_v1(void) { return &kPlugin; }
