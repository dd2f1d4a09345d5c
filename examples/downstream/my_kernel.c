/* my_kernel — the kernel of a downstream project: edge-weighted SpMM per head (spmm_ve), forward and
 * backward, in float32 on the CPU. gnncheck checks it through the C plugin ABI (gnncheck/plugin.h):
 *
 *   y[i, h·F+f]       = Σ_{e ∈ row i} w[e,h] · x[col_e, h·F+f]
 *   grad_x[j, h·F+f]  = Σ_{e : col_e = j} w[e,h] · grad_y[row_e, h·F+f]     (Aᵀ, by scattering edges)
 *   grad_w[e, h]      = Σ_f grad_y[row_e, h·F+f] · x[col_e, h·F+f]
 *
 * Replace the bodies with your own kernel (or call into your library) and keep the test in
 * CMakeLists.txt: `ctest` then runs gnncheck's `ci` suite against it.
 */
#include <stdio.h>
#include <string.h>

#include "gnncheck/plugin.h"

static const gnncheck_tensor* find_tensor(const gnncheck_tensor* list, int64_t count, const char* name) {
  for (int64_t k = 0; k < count; ++k)
    if (strcmp(list[k].name, name) == 0) return &list[k];
  return NULL;
}

static int fail(char* error, int64_t capacity, int status, const char* message) {
  snprintf(error, (size_t)capacity, "%s", message);
  return status;
}

static int evaluate(const gnncheck_case* c, char* error, int64_t error_capacity, int64_t* peak_bytes) {
  (void)peak_bytes;
  if (strcmp(c->target, "spmm_ve") != 0) return fail(error, error_capacity, GNNCHECK_UNSUPPORTED, "my_kernel computes spmm_ve only");
  const gnncheck_tensor* w = find_tensor(c->inputs, c->num_inputs, "edge_values");
  const gnncheck_tensor* x = find_tensor(c->inputs, c->num_inputs, "x");
  gnncheck_tensor* y = (gnncheck_tensor*)find_tensor(c->outputs, c->num_outputs, "y");
  if (!w || !x || !y || w->rank != 2 || x->rank != 2)
    return fail(error, error_capacity, GNNCHECK_ERROR, "spmm_ve: expected edge_values [E,H], x [n_src,H*F] and y");
  const gnncheck_graph* g = c->graph;
  const int64_t heads = w->shape[1], width = x->shape[1];
  if (heads <= 0 || width % heads != 0) return fail(error, error_capacity, GNNCHECK_ERROR, "spmm_ve: width is not a multiple of heads");
  const int64_t features = width / heads;
  const float* wv = (const float*)w->data;
  const float* xv = (const float*)x->data;
  float* yv = (float*)y->data;

  for (int64_t i = 0; i < g->n_dst; ++i) {
    float* y_row = yv + i * width;
    for (int64_t k = 0; k < width; ++k) y_row[k] = 0.0f;
    for (int64_t e = g->row_ptr[i]; e < g->row_ptr[i + 1]; ++e) {
      const float* x_row = xv + g->col_idx[e] * width;
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t f = 0; f < features; ++f) y_row[h * features + f] += wv[e * heads + h] * x_row[h * features + f];
    }
  }
  if (c->num_grad_outputs == 0) return GNNCHECK_OK;

  const gnncheck_tensor* gy = find_tensor(c->grad_outputs, c->num_grad_outputs, "y");
  gnncheck_tensor* gw = (gnncheck_tensor*)find_tensor(c->gradients, c->num_gradients, "edge_values");
  gnncheck_tensor* gx = (gnncheck_tensor*)find_tensor(c->gradients, c->num_gradients, "x");
  if (!gy || !gw || !gx) return fail(error, error_capacity, GNNCHECK_ERROR, "spmm_ve: gradient tensors missing");
  const float* gyv = (const float*)gy->data;
  float* gwv = (float*)gw->data;
  float* gxv = (float*)gx->data;
  for (int64_t k = 0; k < g->n_src * width; ++k) gxv[k] = 0.0f;
  for (int64_t i = 0; i < g->n_dst; ++i) {
    const float* gy_row = gyv + i * width;
    for (int64_t e = g->row_ptr[i]; e < g->row_ptr[i + 1]; ++e) {
      const float* x_row = xv + g->col_idx[e] * width;
      float* gx_row = gxv + g->col_idx[e] * width;
      for (int64_t h = 0; h < heads; ++h) {
        float dot = 0.0f;
        for (int64_t f = 0; f < features; ++f) {
          dot += gy_row[h * features + f] * x_row[h * features + f];
          gx_row[h * features + f] += wv[e * heads + h] * gy_row[h * features + f];
        }
#ifdef MY_KERNEL_PLANTED_BUG
        dot = -dot; /* the planted bug of the `my_kernel_planted_bug` test: grad_w has the wrong sign */
#endif
        gwv[e * heads + h] = dot;
      }
    }
  }
  return GNNCHECK_OK;
}

static const gnncheck_target_decl kTargets[] = {{"spmm_ve", GNNCHECK_PRECISION_FLOAT32}};
static const gnncheck_plugin kPlugin = {GNNCHECK_PLUGIN_ABI_VERSION, "my_kernel", 1, kTargets, evaluate};

GNNCHECK_PLUGIN_EXPORT const gnncheck_plugin* gnncheck_plugin_v1(void) { return &kPlugin; }
