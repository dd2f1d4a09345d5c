// gnncheck/gpu/layers/layers.h — the GPU layers (definitions: oracle/layers/*.h), forward and
// backward for the input features and every parameter, as targets of the `gpu` system: one file
// each, gpu/layers/<layer>_layer.cpp; gpu_layer_targets() (layer_targets.cpp) names them.
//
// Each is the chain of gpu/ ops the oracle's layer is built from; dense products go through cuBLAS
// (gpu/layers/dense.h). R-GCN and RGAT are their own kernels (gpu/layers/rgcn.cuh, rgat.cuh): one
// thread per output element, fixed orders, no cuBLAS. Activations that a backward needs are kept on
// the device for the duration of the evaluation. Graph storage per layer: gpu/device_graph.h. Edge
// activations kept for the backward: GAT logits, LeakyReLU scores and alpha ([E, H] each, + the
// dropout factors and the dropped alpha when attn_dropout > 0); GATv2 z and LeakyReLU(z) ([E, H·C]
// each), alpha ([E, H]); AGNN cosine, logits and alpha ([E] each). R-GCN keeps per-destination ones
// only: c_{i,r} and h ([n_dst, R] and [n_dst, R, in]), and W_r ([R, in, out]) with bases. RGAT keeps
// out_i and out_j ([E, H·C] each), z and alpha ([E, H] each).
#pragma once

#include "gpu/target_run.h"

namespace gnncheck::gpu {

void gcn_layer(TargetRun& run);
// GIN, or GINE with edge_messages (x[col_e] + edge_attr[e] in the message).
void gin_family_layer(TargetRun& run, bool edge_messages);
void sage_layer(TargetRun& run);
void gat_layer(TargetRun& run);
void gatv2_layer(TargetRun& run);
void agnn_layer(TargetRun& run);
void rgcn_layer(TargetRun& run);
void rgat_layer(TargetRun& run);

}  // namespace gnncheck::gpu
