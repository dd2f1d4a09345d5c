// gnncheck_gpu_kernel_bench — the GPU reference's sparse kernels on the Reddit-shaped graph
// (issue 8): SpMM, transposed SpMM, SDDMM (dot and add), edge softmax (forward and backward) and
// the fused eShuffle+SpMMve of attention backward. For each: median time of 10 runs (CUDA events,
// after 2 warm-ups), the bytes it must move at least (indices, edge values, each dense row read
// once, the output written once) as achieved bytes/s against the card's copy bandwidth measured
// in the same run (cudaMemcpy device to device, read + write), and, where cuSPARSE has the same
// operation, cuSPARSE's time on the same data and the ratio.
//
//   gnncheck_gpu_kernel_bench --features 64 --json kernels.json
#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gpu/aggregate.cuh"
#include "gpu/training_kernels.cuh"
#include "gpu/elementwise.cuh"
#include "performance/reddit_graph.h"
#include "gpu/benchmarks/event_timing.h"
#include "gpu/cuda_check.h"
#include "gpu/edge_softmax.cuh"
#include "gpu/eshuffle.cuh"
#include "gpu/sddmm.cuh"
#include "gpu/spmm.cuh"
#include "gpu/spmm_ve.cuh"

namespace perf = gnncheck::perf;
namespace gpu = gnncheck::gpu;
using gnncheck::index_t;

namespace {

struct Timer {
  cudaStream_t stream;
  gpu::DeviceAllocator* allocator;
  // Bytes the last measured call allocated beyond what was held before it (cuSPARSE workspace,
  // temporaries): the kernel's workspace.
  mutable std::int64_t last_workspace_bytes = 0;
  // Median milliseconds of `runs` calls after `warmup` calls.
  double median_ms(const std::function<void()>& work, int warmup = 2, int runs = 10) const {
    allocator->reset_peak();
    const std::int64_t held = allocator->current_bytes();
    for (int i = 0; i < warmup; ++i) work();
    last_workspace_bytes = allocator->peak_bytes() - held;
    const std::vector<float> ms = gpu::event_times_ms(stream, work, 0, runs);
    return ms[ms.size() / 2];
  }
};

void fill(gpu::GpuContext& ctx, gpu::DeviceBuffer<float>& b, std::uint64_t seed) {
  std::vector<float> host(static_cast<size_t>(b.size()));
  std::uint64_t z = seed;
  for (float& v : host) {
    z = z * 6364136223846793005ull + 1442695040888963407ull;
    v = static_cast<float>(static_cast<std::int64_t>(z >> 41) - (1 << 22)) / static_cast<float>(1 << 22);
  }
  b.upload(host, ctx.stream);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Sparse kernels of the GPU reference on the Reddit-shaped graph"};
  perf::RedditShape shape;
  std::uint64_t seed = 1;
  index_t features = 64, heads = 1;
  std::string json_path;
  app.add_option("--nodes", shape.nodes);
  app.add_option("--edges", shape.directed_edges);
  app.add_option("--seed", seed);
  app.add_option("--features", features, "dense row width F (per head)")->check(CLI::PositiveNumber);
  app.add_option("--heads", heads, "heads of the edge tensors")->check(CLI::PositiveNumber);
  app.add_option("--json", json_path);
  CLI11_PARSE(app, argc, argv);
  try {
    const auto status = gpu::probe_device();
    if (!status.available) {
      fmt::print(stderr, "gnncheck_gpu_kernel_bench: {}\n", status.reason);
      return 2;
    }
    shape.features = 1;  // the kernels make their own dense operands
    shape.classes = 1;
    shape.self_loops = true;  // A + I, the graph the GCN and GAT layers aggregate over
    const perf::RedditData data = perf::make_reddit_shaped(shape, seed);
    const gnncheck::Graph& host = data.graph;
    gpu::GpuContext ctx;
    gpu::DeviceGraph g(ctx, host);
    g.ensure_csc(ctx);
    g.row_of_edge(ctx);
    g.edge_perm(ctx);
    g.ones(ctx);
    const index_t v = g.n_dst(), e = g.num_edges(), f = features, h = heads, width = h * f;
    const double offset_bytes = sizeof(*g.row_ptr()), node_bytes = sizeof(*g.col_idx());
    const Timer timer{ctx.stream, &ctx.allocator};

    // The card's copy bandwidth: 1 GiB device to device, counted as read + write.
    double copy_gbps = 0;
    {
      const std::int64_t n = std::int64_t{1} << 28;
      gpu::DeviceBuffer<float> a(ctx.allocator, n), b(ctx.allocator, n);
      a.zero(ctx.stream);
      const double ms = timer.median_ms([&] {
        GNNCHECK_CUDA_CHECK(cudaMemcpyAsync(b.data(), a.data(), a.bytes(), cudaMemcpyDeviceToDevice, ctx.stream));
      });
      copy_gbps = 2.0 * static_cast<double>(a.bytes()) / (ms * 1e6);
    }
    fmt::print("graph: {} nodes, {} edges; F = {}, heads = {}; index bytes: offsets {}, node ids {}\n", v, e, f, h,
               offset_bytes, node_bytes);
    fmt::print("copy bandwidth (cudaMemcpy D2D, 1 GiB, read + write): {:.0f} GB/s\n\n", copy_gbps);

    gpu::DeviceBuffer<float> x(ctx.allocator, v * width), y(ctx.allocator, v * width), z(ctx.allocator, v * width);
    gpu::DeviceBuffer<float> w(ctx.allocator, e * h), w2(ctx.allocator, e * h), w3(ctx.allocator, e * h);
    gpu::DeviceBuffer<float> s_dst(ctx.allocator, v * h), s_src(ctx.allocator, v * h);
    fill(ctx, x, 1);
    fill(ctx, y, 2);
    fill(ctx, w, 3);
    fill(ctx, s_dst, 4);
    fill(ctx, s_src, 5);
    ctx.synchronize();

    // Least bytes each kernel must move: CSR/CSC structure, edge tensors, dense rows once, output once.
    const double csr = offset_bytes * (v + 1) + node_bytes * e;
    const double dense = 4.0 * v * f, dense_w = 4.0 * v * width, edge_t = 4.0 * e * h;
    nlohmann::json rows = nlohmann::json::array();
    // `workspace` is what our call allocated beyond the operands (Timer::last_workspace_bytes, read
    // right after timing it).
    auto report = [&](const std::string& name, double ms, std::int64_t workspace, double bytes, const std::string& peer,
                      double peer_ms) {
      const double gbps = bytes / (ms * 1e6);
      nlohmann::json r{{"kernel", name}, {"ms", ms}, {"workspace_bytes", workspace}, {"min_bytes", bytes},
                       {"gbps", gbps}, {"share_of_copy_bw", gbps / copy_gbps}, {"floor_ms", bytes / (copy_gbps * 1e6)}};
      if (!peer.empty()) {
        r["cusparse"] = peer;
        r["cusparse_ms"] = peer_ms;
        r["speedup_vs_cusparse"] = peer_ms / ms;
      }
      rows.push_back(r);
      fmt::print("{:<44} {:>9.3f} ms  {:>7.0f} GB/s  {:>5.1f}% of copy  floor {:>7.3f} ms  wksp {:>6.1f} MiB  {}\n",
                 name, ms, gbps, 100 * gbps / copy_gbps, bytes / (copy_gbps * 1e6), workspace / 1048576.0,
                 peer.empty() ? std::string("(no cuSPARSE equivalent)")
                              : fmt::format("{} {:.3f} ms → {:.2f}× ", peer, peer_ms, peer_ms / ms));
      std::fflush(stdout);
    };
    const gpu::CompressedView csr_view{v, g.row_ptr(), g.col_idx()};

    // SpMM Y = A·X: the reference's fused row kernel and cuSPARSE's (which spmm_forward calls).
    {
      const double ms = timer.median_ms([&] { gpu::aggregate(ctx, csr_view, {}, {}, x.data(), f, y.data()); });
      const std::int64_t ws = timer.last_workspace_bytes;
      const double cs = timer.median_ms([&] { gpu::spmm_forward(ctx, g, x.data(), f, y.data()); });
      report(fmt::format("SpMM A·X (row kernel, F={})", f), ms, ws, csr + 2 * dense, "cusparseSpMM", cs);
    }
    // Transposed SpMM Aᵀ·Y: the fused CSC kernel vs cuSPARSE's native transpose.
    {
      const double ms = timer.median_ms(
          [&] { gpu::spmm_transposed_forward(ctx, g, y.data(), f, z.data(), gpu::TransposeMethod::fused_csc_kernel); });
      const std::int64_t ws = timer.last_workspace_bytes;
      const double cs = timer.median_ms(
          [&] { gpu::spmm_transposed_forward(ctx, g, y.data(), f, z.data(), gpu::TransposeMethod::native_cusparse); });
      report(fmt::format("transposed SpMM Aᵀ·Y (CSC kernel, F={})", f), ms, ws, csr + 2 * dense,
             "cusparseSpMM(opA=T)", cs);
    }
    // SDDMM dot e = ⟨U[row], V[col]⟩ per head: edge-parallel over the COO vs cusparseSDDMM.
    {
      const double ms = timer.median_ms([&] { gpu::sddmm_dot_forward(ctx, g, x.data(), y.data(), h, f, w2.data()); });
      const std::int64_t ws = timer.last_workspace_bytes;
      const double cs = timer.median_ms([&] { gpu::sddmm_dot_cusparse(ctx, g, x.data(), y.data(), h, f, w3.data()); });
      report(fmt::format("SDDMM dot (COO, H={}, C={})", h, f), ms, ws, 2 * node_bytes * e + 2 * dense_w + edge_t,
             "cusparseSDDMM", cs);
    }
    // SDDMM add (GAT's logits) e = a[row] + b[col].
    {
      const double ms = timer.median_ms([&] { gpu::sddmm_add_forward(ctx, g, s_dst.data(), s_src.data(), h, w2.data()); });
      report(fmt::format("SDDMM add (COO, H={})", h), ms, timer.last_workspace_bytes, 2 * node_bytes * e + 8.0 * v * h + edge_t, "", 0);
    }
    // Edge softmax forward and backward (one warp per row).
    {
      const double ms = timer.median_ms([&] { gpu::edge_softmax_forward(ctx, g, w.data(), h, w2.data()); });
      report(fmt::format("edge softmax forward (H={})", h), ms, timer.last_workspace_bytes, offset_bytes * (v + 1) + 2 * edge_t, "", 0);
      const double bw = timer.median_ms([&] { gpu::edge_softmax_backward(ctx, g, w2.data(), w.data(), h, w3.data()); });
      report(fmt::format("edge softmax backward (H={})", h), bw, timer.last_workspace_bytes, offset_bytes * (v + 1) + 3 * edge_t, "", 0);
    }
    // SpMMve forward (cuSPARSE per head) and the fused eShuffle + SpMMve of attention backward,
    // against cuSPARSE on a shuffled copy (materialized CSC) and cuSPARSE's native transpose.
    {
      const double fwd = timer.median_ms([&] { gpu::spmm_ve_forward(ctx, g, w.data(), h, x.data(), f, y.data()); });
      report(fmt::format("SpMMve forward (cuSPARSE per head, H={}, C={})", h, f), fwd, timer.last_workspace_bytes, csr + edge_t + 2 * dense_w,
             "", 0);
      const double ms = timer.median_ms([&] {
        gpu::spmm_ve_transposed_forward(ctx, g, w.data(), h, y.data(), f, z.data(), gpu::TransposeMethod::fused_csc_kernel);
      });
      const std::int64_t ws = timer.last_workspace_bytes;
      const double mat = timer.median_ms([&] {
        gpu::spmm_ve_transposed_forward(ctx, g, w.data(), h, y.data(), f, z.data(), gpu::TransposeMethod::materialized_csc);
      });
      const double nat = timer.median_ms([&] {
        gpu::spmm_ve_transposed_forward(ctx, g, w.data(), h, y.data(), f, z.data(), gpu::TransposeMethod::native_cusparse);
      });
      const double bytes = csr + offset_bytes * e /*edge_perm*/ + edge_t + 2 * dense_w;
      report(fmt::format("fused eShuffle+SpMMve (H={}, C={})", h, f), ms, ws, bytes, "eShuffle + cuSPARSE on CSC", mat);
      rows.back()["cusparse_native_transpose_ms"] = nat;
      fmt::print("{:<44} cuSPARSE native transpose: {:.3f} ms → {:.2f}×\n", "", nat, nat / ms);
    }
    // Dense reductions of training (bias gradient): gpu/elementwise's one-thread-per-column
    // column_sums against the training kernels' parallel weighted_column_sums (gpu/training_kernels.cuh).
    {
      gpu::DeviceBuffer<float> partials(ctx.allocator, gpu::column_sum_slices * width), sums(ctx.allocator, width);
      const double serial = timer.median_ms([&] { gpu::column_sums(ctx, v, width, x.data(), sums.data()); });
      const std::vector<float> serial_sums = sums.download(ctx.stream);
      const double parallel = timer.median_ms(
          [&] { gpu::weighted_column_sums(ctx, v, 1, width, x.data(), nullptr, partials.data(), sums.data()); });
      // The two sum in different orders: they agree to float32 rounding (|Σ| ≤ rows on [-1, 1) data).
      const std::vector<float> parallel_sums = sums.download(ctx.stream);
      double largest_difference = 0;
      for (size_t c = 0; c < parallel_sums.size(); ++c)
        largest_difference = std::max(largest_difference, static_cast<double>(std::abs(parallel_sums[c] - serial_sums[c])));
      fmt::print("column sums: largest |parallel − gpu::column_sums| = {:.3g} (float32 rounding of sums of {} values "
                 "is below {:.3g})\n",
                 largest_difference, v, static_cast<double>(v) * v * 5.96e-8);
      const double bytes = 4.0 * v * width;
      fmt::print("{:<44} {:>9.3f} ms  {:>7.0f} GB/s  (gpu::column_sums: {:.3f} ms → {:.1f}×)\n",
                 fmt::format("column sums [{} × {}] (parallel, 2 passes)", v, width), parallel,
                 bytes / (parallel * 1e6), serial, serial / parallel);
      rows.push_back({{"kernel", "column sums (bias gradient)"}, {"ms", parallel}, {"min_bytes", bytes},
                      {"gbps", bytes / (parallel * 1e6)}, {"gpu_column_sums_ms", serial}});
    }
    fmt::print("\n(floor = least bytes / copy bandwidth; dense operands counted once, although rows are gathered once "
               "per edge: {:.1f} GB of gathers at F = {})\n",
               4.0 * e * f / 1e9, f);
    if (!json_path.empty()) {
      cudaDeviceProp prop{};
      GNNCHECK_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
      std::ofstream(json_path) << nlohmann::json{{"device", prop.name}, {"nodes", v}, {"edges", e}, {"features", f},
                                                 {"heads", h}, {"copy_gbps", copy_gbps}, {"kernels", rows}}
                                      .dump(1)
                               << "\n";
    }
    return 0;
  } catch (const std::exception& ex) {
    fmt::print(stderr, "gnncheck_gpu_kernel_bench: {}\n", ex.what());
    return 1;
  }
}
