/* Plugins that misbehave on purpose, for plugin_system_test. Built twice:
 *   gnncheck_test_faulty_plugin   computes spmm in float64, but by the case's seed:
 *                                 1 segfaults, 2 never returns, 3 reports an error, 4 prints on stdout,
 *                                 5 aborts, 6 answers NaN, 7 overwrites its output's shape with
 *                                 garbage, 8 floods stderr (300 MB), 9 leaks 8 MiB per case,
 *                                 10 allocates without bound;
 *   gnncheck_test_wrong_abi_plugin  (TEST_WRONG_ABI) claims an ABI version gnncheck does not speak;
 *   gnncheck_test_no_entry_plugin   (TEST_NO_ENTRY) a shared library without the entry point;
 *   gnncheck_test_undefined_symbol_plugin  (TEST_UNDEFINED_SYMBOL) needs a function nothing defines,
 *                                 so dlopen(RTLD_NOW) fails;
 *   gnncheck_test_unknown_target_plugin    (TEST_UNKNOWN_TARGET) declares a misspelled target;
 *   gnncheck_test_bad_precision_plugin     (TEST_BAD_PRECISION) declares a precision that is not a
 *                                 gnncheck_precision. */
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gnncheck/plugin.h"

/* Memory that is touched (so it is resident) and never freed. The pointers are kept in a volatile
 * list and written through volatile, so that the compiler cannot drop the allocation. */
static void* volatile leaked_blocks[1 << 16];
static size_t num_leaked;

static void leak(size_t bytes) {
  volatile char* block = (volatile char*)malloc(bytes);
  if (!block) return;
  for (size_t k = 0; k < bytes; k += 4096) block[k] = 1;
  leaked_blocks[num_leaked++ % (sizeof leaked_blocks / sizeof leaked_blocks[0])] = (void*)block;
}

#ifdef TEST_UNDEFINED_SYMBOL
void gnncheck_test_function_nothing_defines(void);
#endif

static int evaluate(const gnncheck_case* c, char* error, int64_t capacity, int64_t* peak_bytes) {
#ifdef TEST_UNDEFINED_SYMBOL
  gnncheck_test_function_nothing_defines();
#endif
  if (c->seed == 1) raise(SIGSEGV);
  if (c->seed == 5) {
    fprintf(stderr, "faulty plugin: assertion failed, aborting\n");
    abort();
  }
  if (c->seed == 8) {
    char line[1024];
    memset(line, '.', sizeof line);
    line[sizeof line - 1] = '\n';
    for (int k = 0; k < 300 * 1024; ++k) fwrite(line, 1, sizeof line, stderr);
  }
  if (c->seed == 9) leak((size_t)8 << 20);
  if (c->seed == 10) {
    fprintf(stderr, "faulty plugin: allocating without bound\n");
    fflush(stderr);
    for (;;) leak((size_t)16 << 20);
  }
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
  if (c->seed == 6) y[0] = NAN;
  if (c->seed == 7) {
    /* The shape is const for the plugin; a buggy one writes through it anyway. */
    int64_t* shape = (int64_t*)c->outputs[0].shape;
    shape[0] = INT64_C(1) << 40;
    shape[1] = -3;
  }
  return GNNCHECK_OK;
}

#if defined(TEST_UNKNOWN_TARGET)
static const gnncheck_target_decl kTargets[] = {{"spmm_tranposed", GNNCHECK_PRECISION_FLOAT64}};
#elif defined(TEST_BAD_PRECISION)
static const gnncheck_target_decl kTargets[] = {{"spmm", (gnncheck_precision)42}};
#else
static const gnncheck_target_decl kTargets[] = {{"spmm", GNNCHECK_PRECISION_FLOAT64}};
#endif

#ifdef TEST_WRONG_ABI
static const gnncheck_plugin kPlugin = {GNNCHECK_PLUGIN_ABI_VERSION + 98, "wrong_abi", 1, kTargets, evaluate};
#else
static const gnncheck_plugin kPlugin = {GNNCHECK_PLUGIN_ABI_VERSION, "faulty_plugin", 1, kTargets, evaluate};
#endif

#if defined(TEST_DECLARES_ATTRIBUTES)
/* Implements spmm at widths 1, 2 and 3 only. */
static const gnncheck_attribute_decl kImplemented[] = {{"spmm", "features", "1, 2,3"}};
static const gnncheck_plugin_attributes kAttributes = {1, kImplemented};
GNNCHECK_PLUGIN_EXPORT const gnncheck_plugin_attributes* gnncheck_plugin_attributes_v1(void) { return &kAttributes; }
#elif defined(TEST_BAD_DECLARATION)
/* A misspelled attribute: refused, never silently implemented for every value. */
static const gnncheck_attribute_decl kImplemented[] = {{"spmm", "feature", "2"}};
static const gnncheck_plugin_attributes kAttributes = {1, kImplemented};
GNNCHECK_PLUGIN_EXPORT const gnncheck_plugin_attributes* gnncheck_plugin_attributes_v1(void) { return &kAttributes; }
#endif

#ifdef TEST_NO_ENTRY
GNNCHECK_PLUGIN_EXPORT const gnncheck_plugin* some_other_entry(void) { return &kPlugin; }
#else
GNNCHECK_PLUGIN_EXPORT const gnncheck_plugin* gnncheck_plugin_v1(void) { return &kPlugin; }
#endif
