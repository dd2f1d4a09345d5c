// gnncheck/gpu/layers/layer_support.h — what several GPU layers share: the graph they aggregate
// over, an optional bias, and the attention layers' joining of their heads.
#pragma once

#include <string>

#include "core/graph.h"
#include "gpu/device_tensor.h"
#include "gpu/oracle_conventions.h"
#include "gpu/target_run.h"

namespace gnncheck::gpu {

// The graph a layer aggregates over: A, or A + I in the block convention.
Graph aggregation_graph(const Graph& g, bool self_loops, const std::string& layer);

// The bias input's device pointer when the layer has one, else nullptr.
const float* bias_or_null(const TargetRun& run, bool bias);

// The attention layers' y from out [n_dst, H·C]: out itself (concat) or its mean over the heads,
// plus the bias.
void join_heads(TargetRun& run, bool concat, bool bias, index_t heads, index_t channels, const DeviceTensor& out);

// Its backward: the bias's gradient, and the gradient at out — grad_y itself (concat) or grad_y / H
// for every head, kept in `storage`.
const float* join_heads_backward(TargetRun& run, bool concat, bool bias, index_t heads, index_t channels,
                                 DeviceTensor& storage);

}  // namespace gnncheck::gpu
