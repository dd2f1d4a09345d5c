/* Plugins that misbehave on purpose, for plugin_system_test. Built twice:
 *   gnncheck_test_faulty_plugin   computes spmm in float64, but by the case's seed:
 *                                 1 segfaults, 2 never returns, 3 reports an error, 4 prints on stdout;
 *   gnncheck_test_wrong_abi_plugin  (TEST_WRONG_ABI) claims an ABI version gnncheck does not speak;
 *   gnncheck_test_no_entry_plugin   (TEST_NO_ENTRY) a shared library without the entry point. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gnncheck/plugin.h"

static int evaluate(const gnncheck_case* c, char* error, int64_t capacity, int64_t* peak_bytes) {
  if (c->seed == 1) raise(SIGSEGV);
  if (c->seed == 2)
    for (;;) pause();
  if (c->seed == 3) {
    snprintf(error, (size_t)capacity, "cudaMalloc failed: out of memory (simulated)");
    return GNNCHECK_ERROR;
  }
  if (c->seed == 4) {
    printf("a kernel that prints on stdout\n");
    fflush(stdout);
  }
  *peak_bytes = 4096;
  const gnncheck_graph* g = c->graph;
  const gnncheck_tensor* x = &c->inputs[0];
  double* y = (double*)c->outputs[0].data;
  const int64_t width = x->shape[1];
  for (int64_t i = 0; i < g->n_dst; ++i)
    for (int64_t e = g->row_ptr[i]; e < g->row_ptr[i + 1]; ++e)
      for (int64_t f = 0; f < width; ++f) y[i * width + f] += ((const double*)x->data)[g->col_idx[e] * width + f];
  if (c->num_gradients == 1) {
    const double* gy = (const double*)c->grad_outputs[0].data;
    double* gx = (double*)c->gradients[0].data;
    for (int64_t i = 0; i < g->n_dst; ++i)
      for (int64_t e = g->row_ptr[i]; e < g->row_ptr[i + 1]; ++e)
        for (int64_t f = 0; f < width; ++f) gx[g->col_idx[e] * width + f] += gy[i * width + f];
  }
  return GNNCHECK_OK;
}

static const gnncheck_target_decl kTargets[] = {{"spmm", GNNCHECK_PRECISION_FLOAT64}};

#ifdef TEST_WRONG_ABI
static const gnncheck_plugin kPlugin = {GNNCHECK_PLUGIN_ABI_VERSION + 98, "wrong_abi", 1, kTargets, evaluate};
#else
static const gnncheck_plugin kPlugin = {GNNCHECK_PLUGIN_ABI_VERSION, "faulty_plugin", 1, kTargets, evaluate};
#endif

#ifdef TEST_NO_ENTRY
GNNCHECK_PLUGIN_EXPORT const gnncheck_plugin* some_other_entry(void) { return &kPlugin; }
#else
GNNCHECK_PLUGIN_EXPORT const gnncheck_plugin* gnncheck_plugin_v1(void) { return &kPlugin; }
#endif
