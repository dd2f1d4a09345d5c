/* Plugins of float16 spmm that declare float32 sums (gnncheck_plugin_accumulation_v1), for
 * plugin_system_test. Built three times:
 *   gnncheck_test_half_plugin          stores in float16 and sums in float32, as it declares: correct;
 *   gnncheck_test_half_sums_plugin     (TEST_SUMS_IN_FLOAT16) declares the same but sums in float16;
 *   gnncheck_test_coarse_sums_plugin   (TEST_COARSER_ACCUMULATION) declares bfloat16 storage with
 *                                      float16 sums: a narrower range than its storage, refused. */
#include <math.h>
#include <stdint.h>

#include "gnncheck/plugin.h"

/* x rounded to float16 (nearest, ties to even; ±∞ past 65504), by hand rather than through _Float16,
 * which not every C compiler has on x86-64 (clang 14 has not). Rounding a double of a float16 sum's
 * exact value gives float16's own addition: double holds the sum of two float16 values exactly. */
static double to_float16(double x) {
  if (!isfinite(x) || x == 0.0) return x;
  int exponent = 0;
  frexp(x, &exponent);                       /* |x| in [2^(exponent−1), 2^exponent) */
  const int lowest_bit = exponent - 11 < -24 ? -24 : exponent - 11;  /* 11 significant bits; subnormal grid 2^-24 */
  const double rounded = ldexp(nearbyint(ldexp(x, -lowest_bit)), lowest_bit);
  return fabs(rounded) > 65504.0 ? copysign(INFINITY, x) : rounded;
}

static float stored(float x) { return (float)to_float16(x); }

#ifdef TEST_SUMS_IN_FLOAT16
typedef double sum_t; /* holding float16 values only: every sum is rounded below */
#define ROUND_SUM(s) to_float16(s)
#else
typedef float sum_t;
#define ROUND_SUM(s) (s)
#endif

/* out[r] = Σ_{k in [begin[r], begin[r+1])} in[index(k)], row by row: the inputs and the result in
 * float16, the sum in sum_t. `by_row` walks the CSR (y = A·x); otherwise the transpose, each source
 * column gathering the rows of its out-edges (grad x = Aᵀ·grad y) in edge-id order. */
static void spmm_half(const gnncheck_graph* g, int64_t width, const float* in, float* out, int by_row) {
  const int64_t rows = by_row ? g->n_dst : g->n_src;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t f = 0; f < width; ++f) {
      sum_t s = 0;
      for (int64_t i = 0; i < g->n_dst; ++i)
        for (int64_t e = g->row_ptr[i]; e < g->row_ptr[i + 1]; ++e) {
          if (by_row ? i != r : g->col_idx[e] != r) continue;
          const int64_t from = by_row ? g->col_idx[e] : i;
          s = (sum_t)ROUND_SUM((sum_t)s + (sum_t)stored(in[from * width + f]));
        }
      out[r * width + f] = stored((float)s);
    }
}

static int evaluate(const gnncheck_case* c, char* error, int64_t capacity, int64_t* peak_bytes) {
  (void)error;
  (void)capacity;
  (void)peak_bytes;
  const int64_t width = c->inputs[0].shape[1];
  spmm_half(c->graph, width, (const float*)c->inputs[0].data, (float*)c->outputs[0].data, 1);
  if (c->num_gradients == 1)
    spmm_half(c->graph, width, (const float*)c->grad_outputs[0].data, (float*)c->gradients[0].data, 0);
  return GNNCHECK_OK;
}

#ifdef TEST_COARSER_ACCUMULATION
static const gnncheck_target_decl kTargets[] = {{"spmm", GNNCHECK_PRECISION_BFLOAT16}};
static const gnncheck_accumulation_decl kSums[] = {{"spmm", GNNCHECK_PRECISION_FLOAT16}};
#else
static const gnncheck_target_decl kTargets[] = {{"spmm", GNNCHECK_PRECISION_FLOAT16}};
static const gnncheck_accumulation_decl kSums[] = {{"spmm", GNNCHECK_PRECISION_FLOAT32}};
#endif
static const gnncheck_plugin kPlugin = {GNNCHECK_PLUGIN_ABI_VERSION, "half_spmm", 1, kTargets, evaluate};
static const gnncheck_plugin_accumulation kAccumulation = {1, kSums};

GNNCHECK_PLUGIN_EXPORT const gnncheck_plugin* gnncheck_plugin_v1(void) { return &kPlugin; }
GNNCHECK_PLUGIN_EXPORT const gnncheck_plugin_accumulation* gnncheck_plugin_accumulation_v1(void) { return &kAccumulation; }
