/* gnncheck/plugin.h — the C ABI through which a shared library puts its kernels under gnncheck.
 *
 * A plugin is a shared library exporting one function, gnncheck_plugin_v1(), that returns a
 * description of the plugin: its name, the targets it computes (each with the precision it computes
 * in) and an evaluate function; two optional symbols declare the attribute values it implements and
 * the format it sums in where that is finer than the precision. gnncheck loads the library in a separate host process
 * (gnncheck-plugin-host), so a kernel that crashes or hangs ends that case with status `crashed` or
 * `timeout` and the run goes on. Everything crosses the ABI as plain pointers with explicit sizes:
 * int64 indices, float32 or float64 values, row-major tensors. Target names, their tensors and their
 * meaning are those of `gnncheck list` and adapters/PROTOCOL.md.
 *
 *   static const gnncheck_target_decl targets[] = {{"spmm", GNNCHECK_PRECISION_FLOAT32}};
 *   static int evaluate(const gnncheck_case* c, char* error, int64_t error_capacity, int64_t* peak_bytes) { ... }
 *   static const gnncheck_plugin plugin = {GNNCHECK_PLUGIN_ABI_VERSION, "my_kernels", 1, targets, evaluate};
 *   GNNCHECK_PLUGIN_EXPORT const gnncheck_plugin* gnncheck_plugin_v1(void) { return &plugin; }
 *
 * Then: gnncheck run --plugin ./libmy_kernels.so
 *
 * Versioning: GNNCHECK_PLUGIN_ABI_VERSION changes whenever a struct below changes layout or meaning;
 * the entry point's name carries the major version, and gnncheck refuses a plugin whose abi_version
 * differs from its own. See examples/plugin/ for a complete plugin (CPU SpMM forward and backward).
 */
#ifndef GNNCHECK_PLUGIN_H
#define GNNCHECK_PLUGIN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GNNCHECK_PLUGIN_ABI_VERSION 1

#if defined(__GNUC__)
#define GNNCHECK_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define GNNCHECK_PLUGIN_EXPORT
#endif

/* Element type of a tensor. Every tensor of a case has the dtype of the target's declaration:
 * GNNCHECK_FLOAT64 for targets declared float64, GNNCHECK_FLOAT32 for all others. */
typedef enum gnncheck_dtype { GNNCHECK_FLOAT32 = 1, GNNCHECK_FLOAT64 = 2 } gnncheck_dtype;

/* The arithmetic a target is computed in; gnncheck's tolerance derives from its unit roundoff. */
typedef enum gnncheck_precision {
  GNNCHECK_PRECISION_FLOAT64 = 1,
  GNNCHECK_PRECISION_FLOAT32 = 2,
  GNNCHECK_PRECISION_TF32 = 3,
  GNNCHECK_PRECISION_BFLOAT16 = 4,
  GNNCHECK_PRECISION_FLOAT16 = 5
} gnncheck_precision;

/* What evaluate() returns. */
typedef enum gnncheck_status {
  GNNCHECK_OK = 0,          /* every output (and gradient, when asked) was written */
  GNNCHECK_UNSUPPORTED = 1, /* this case is outside what the plugin computes; say why in `error` */
  GNNCHECK_ERROR = 2        /* the plugin failed (out of memory, a CUDA error, ...); say why in `error` */
} gnncheck_status;

/* A dense row-major tensor. For inputs `data` is read-only; for outputs and gradients gnncheck has
 * allocated `data` (zero-filled) with exactly this shape and dtype, and the plugin fills it. */
typedef struct gnncheck_tensor {
  const char* name;      /* e.g. "x", "edge_values", "weight" */
  int64_t rank;
  const int64_t* shape;  /* `rank` entries; element count = product of the shape */
  gnncheck_dtype dtype;
  void* data;            /* float* or double* by dtype */
} gnncheck_tensor;

/* The sparse matrix A of shape n_dst × n_src in CSR. Row i lists the in-edges of destination i; an
 * edge's id is its position in col_idx, and every edge tensor ([E, H]) is in that order. Duplicate
 * edges, self-loops, empty rows and non-square shapes occur. */
typedef struct gnncheck_graph {
  int64_t n_dst;
  int64_t n_src;
  int64_t num_edges;
  const int64_t* row_ptr;  /* n_dst + 1 entries, row_ptr[0] = 0, row_ptr[n_dst] = num_edges */
  const int64_t* col_idx;  /* num_edges entries in [0, n_src) */
} gnncheck_graph;

typedef enum gnncheck_attribute_type {
  GNNCHECK_ATTR_BOOL = 1,
  GNNCHECK_ATTR_INT = 2,
  GNNCHECK_ATTR_DOUBLE = 3,
  GNNCHECK_ATTR_STRING = 4
} gnncheck_attribute_type;

/* One attribute of the case (every attribute of the target, defaults filled in). */
typedef struct gnncheck_attribute {
  const char* name;
  gnncheck_attribute_type type;
  int64_t int_value;        /* BOOL (0 or 1) and INT */
  double double_value;      /* DOUBLE */
  const char* string_value; /* STRING (NUL-terminated) */
} gnncheck_attribute;

/* One evaluation request. Pointers are valid only during the evaluate() call. */
typedef struct gnncheck_case {
  const char* target;
  uint64_t seed;  /* the seed the case was generated from, for the plugin's own logs */
  const gnncheck_graph* graph;
  int64_t num_attributes;
  const gnncheck_attribute* attributes;
  int64_t num_inputs;                /* every input and parameter of the target, in catalogue order */
  const gnncheck_tensor* inputs;
  int64_t num_grad_outputs;          /* 0: forward only */
  const gnncheck_tensor* grad_outputs;
  int64_t num_outputs;               /* to fill */
  gnncheck_tensor* outputs;
  int64_t num_gradients;             /* to fill: one per differentiable input (0 when forward only) */
  gnncheck_tensor* gradients;        /* gradients[k].name is the input it is the gradient of */
} gnncheck_case;

typedef struct gnncheck_target_decl {
  const char* target;  /* a name from `gnncheck list` */
  gnncheck_precision precision;
} gnncheck_target_decl;

/* Evaluates one case. Returns a gnncheck_status. On anything but GNNCHECK_OK, writes a
 * NUL-terminated reason of at most error_capacity bytes (including the NUL) into `error`.
 * Optional: *peak_bytes may be set to the evaluation's peak memory (it is -1 on entry). */
typedef int (*gnncheck_evaluate_fn)(const gnncheck_case* c, char* error, int64_t error_capacity, int64_t* peak_bytes);

typedef struct gnncheck_plugin {
  int32_t abi_version;  /* GNNCHECK_PLUGIN_ABI_VERSION the plugin was compiled against */
  const char* name;     /* the system's name in reports */
  int64_t num_targets;
  const gnncheck_target_decl* targets;
  gnncheck_evaluate_fn evaluate;
} gnncheck_plugin;

/* The one symbol a plugin exports. Called once, right after the library is loaded. */
typedef const gnncheck_plugin* (*gnncheck_plugin_entry_fn)(void);
#define GNNCHECK_PLUGIN_ENTRY_SYMBOL "gnncheck_plugin_v1"

/* Optional: what the plugin implements of a target's attributes where it implements fewer values
 * than the catalogue allows — a convention, a mode or a shape (adapters/PROTOCOL.md §2). Every case
 * gnncheck sends is drawn within it; an attribute not declared is implemented for every value.
 * `values` lists the values implemented, comma-separated, written as `gnncheck list TARGET` shows
 * them: "in", "symmetric,row_mean", "1,2,4", "true", "0.2".
 *
 *   static const gnncheck_attribute_decl implemented[] = {{"gcn", "source_degree", "in"}, {"gat", "heads", "1"}};
 *   static const gnncheck_plugin_attributes attributes = {2, implemented};
 *   GNNCHECK_PLUGIN_EXPORT const gnncheck_plugin_attributes* gnncheck_plugin_attributes_v1(void) { return &attributes; }
 *
 * A plugin without this symbol implements every value of every attribute. */
typedef struct gnncheck_attribute_decl {
  const char* target;     /* a target of the plugin's target table */
  const char* attribute;  /* one of that target's attributes */
  const char* values;     /* comma-separated values, at least one */
} gnncheck_attribute_decl;

typedef struct gnncheck_plugin_attributes {
  int64_t num_declarations;
  const gnncheck_attribute_decl* declarations;
} gnncheck_plugin_attributes;

typedef const gnncheck_plugin_attributes* (*gnncheck_plugin_attributes_fn)(void);
#define GNNCHECK_PLUGIN_ATTRIBUTES_SYMBOL "gnncheck_plugin_attributes_v1"

/* Optional: the format a target's sums and intermediate values are computed in, where it is finer
 * than the precision of the target table (adapters/PROTOCOL.md §2, "Storage and accumulation").
 * A kernel that reads and writes float16 or bfloat16 but sums in float32 (cuSPARSE with computeType
 * CUDA_R_32F, tensor-core kernels) declares its table's precision as the storage format and here
 * float32 as the accumulation; the bounds are then tightened where float32 sums make them so, and a
 * kernel that sums in the storage format after all is caught on a long row.
 *
 *   static const gnncheck_target_decl targets[] = {{"spmm", GNNCHECK_PRECISION_FLOAT16}};
 *   static const gnncheck_accumulation_decl sums[] = {{"spmm", GNNCHECK_PRECISION_FLOAT32}};
 *   static const gnncheck_plugin_accumulation accumulation = {1, sums};
 *   GNNCHECK_PLUGIN_EXPORT const gnncheck_plugin_accumulation* gnncheck_plugin_accumulation_v1(void) { return &accumulation; }
 *
 * A target not declared here accumulates in its table's precision. A declaration for a target
 * outside the table, a value outside gnncheck_precision, a second declaration of one target, or an
 * accumulation coarser than the storage (fewer significand bits or a narrower range: float16 sums
 * for bfloat16 storage) refuses the plugin, naming the declaration. Tensors still cross the ABI in
 * the dtype of the table's precision (float32 for a half format): the plugin rounds to its storage. */
typedef struct gnncheck_accumulation_decl {
  const char* target;               /* a target of the plugin's target table */
  gnncheck_precision accumulation;  /* the format of its sums */
} gnncheck_accumulation_decl;

typedef struct gnncheck_plugin_accumulation {
  int64_t num_declarations;
  const gnncheck_accumulation_decl* declarations;
} gnncheck_plugin_accumulation;

typedef const gnncheck_plugin_accumulation* (*gnncheck_plugin_accumulation_fn)(void);
#define GNNCHECK_PLUGIN_ACCUMULATION_SYMBOL "gnncheck_plugin_accumulation_v1"

#ifdef __cplusplus
}
#endif

#endif /* GNNCHECK_PLUGIN_H */
