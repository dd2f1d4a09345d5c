#include "scale/device_scale_check.h"

#include <chrono>
#include <cmath>
#include <memory>
#include <numeric>
#include <span>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checks/tolerance.h"
#include "gpu/cuda_check.h"
#include "gpu/device_tensor.h"
#include "gpu/kronecker.cuh"
#include "core/error.h"
#include "core/parallel.h"
#include "oracle/random_case.h"
#include "oracle/targets.h"
#include "scale/device_scale_kernels.cuh"
#include "scale/neighbourhood.h"
#include "scale/scale_compare.h"

namespace gnncheck::scale {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

using gpu::DeviceBuffer;
using gpu::DeviceTensor;

// A stable 64-bit tag of a tensor's name, so each input has its own value stream.
std::uint64_t name_tag(const std::string& name) {
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char ch : name) h = (h ^ ch) * 0x100000001b3ull;
  return h;
}

// `values` rounded to float32 (what the device computes with), kept as doubles.
Tensor rounded_to_float32(Tensor t) {
  for (index_t k = 0; k < t.size(); ++k) t[k] = static_cast<double>(static_cast<float>(t[k]));
  return t;
}

DeviceBuffer<std::int64_t> upload_indices(gpu::GpuContext& ctx, std::span<const index_t> values) {
  DeviceBuffer<std::int64_t> d(ctx.allocator, static_cast<std::int64_t>(values.size()));
  d.upload(values.data(), static_cast<std::int64_t>(values.size()), ctx.stream);
  ctx.synchronize();
  return d;
}

// rows `rows` of the device tensor t, then `zero_rows` zero rows, as a host Tensor (exact widening).
Tensor download_rows(gpu::GpuContext& ctx, const DeviceTensor& t, std::span<const index_t> rows, index_t zero_rows) {
  std::vector<index_t> shape = t.shape();
  shape[0] = static_cast<index_t>(rows.size()) + zero_rows;
  Tensor out(shape);
  const index_t width = t.row_size();
  if (rows.empty() || width == 0) return out;
  const auto d_rows = upload_indices(ctx, rows);
  DeviceBuffer<float> compact(ctx.allocator, static_cast<std::int64_t>(rows.size()) * width);
  device::gather_rows(ctx, t.data(), width, d_rows.data(), static_cast<std::int64_t>(rows.size()), compact.data());
  const std::vector<float> values = compact.download(ctx.stream);
  const index_t n = static_cast<index_t>(values.size());
#pragma omp parallel for schedule(static) if (worth_parallel(n))
  for (index_t k = 0; k < n; ++k) out[k] = values[static_cast<size_t>(k)];
  return out;
}

}  // namespace

DeviceGraphRows::DeviceGraphRows(gpu::GpuContext& ctx, const gpu::offset_t* row_ptr, const gpu::node_t* col_idx, index_t n_dst,
                                 index_t n_src)
    : ctx_(ctx), row_ptr_(row_ptr), col_idx_(col_idx), n_dst_(n_dst), n_src_(n_src) {
  GNNCHECK_CUDA_CHECK(cudaMemcpyAsync(&edges_, row_ptr + n_dst, sizeof(index_t), cudaMemcpyDeviceToHost, ctx.stream));
  ctx.synchronize();
}

std::vector<RowExtent> DeviceGraphRows::extents(std::span<const index_t> rows) const {
  const std::vector<std::int64_t> flat = device::row_extents(ctx_, row_ptr_, rows.data(), static_cast<std::int64_t>(rows.size()));
  std::vector<RowExtent> out(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) out[i] = {flat[2 * i], flat[2 * i + 1]};
  return out;
}

index_t DeviceGraphRows::row_holding_edge(index_t edge) const { return device::row_holding_edge(ctx_, row_ptr_, n_dst_, edge); }

std::vector<RowDegree> DeviceGraphRows::largest_rows(index_t count) const {
  std::vector<RowDegree> out;
  for (const device::RankedRow& r : device::largest_rows(ctx_, row_ptr_, n_dst_, count)) out.push_back({r.row, r.degree});
  return out;
}

std::vector<index_t> DeviceGraphRows::rows_where(index_t lo, index_t hi, RowFilter filter) const {
  return device::rows_where(ctx_, row_ptr_, lo, hi, filter == RowFilter::empty);
}

std::vector<index_t> DeviceGraphRows::sources_read_together(std::span<const index_t> rows) const {
  return device::sources_read_together(ctx_, row_ptr_, col_idx_, n_src_, rows.data(), static_cast<std::int64_t>(rows.size()));
}

namespace {

class DeviceChecker {
 public:
  DeviceChecker(std::string system_name, const std::map<std::string, gpu::GpuTargetFn>& targets, int scale,
                const ScaleOptions& options)
      : targets_(targets), scale_(scale), options_(options), cmp_(r_, nb_) {
    r_.system = std::move(system_name);
  }

  ScaleResult run() {
    require_valid_options(options_);
    r_.target = options_.target->spec.name;
    r_.graph_description = options_.graph_description;
    r_.seed = options_.seed;
    r_.rerun_command = options_.rerun_command;
    r_.hub_edge_budget = options_.hub_edge_budget;
    r_.hub_source_budget = options_.hub_source_budget;
    r_.precision = Precision::float32;
    if (!options_.target->spec.gpu.device_resident)
      throw InputError(fmt::format("--target {}: a scale check on a device-resident graph runs {}; other targets of a GPU system "
                                   "run on host-built graphs (rmat:, a file)",
                                   r_.target, fmt::join(gpu::device_resident_targets(), ", ")));
    const auto fn = targets_.find(r_.target);
    if (fn == targets_.end()) return cmp_.error(fmt::format("system '{}' does not implement target '{}'", r_.system, r_.target));
    try {
      return run_on_device(fn->second);
    } catch (const InputError&) {
      throw;
    } catch (const gpu::UnsupportedCase& e) {
      return cmp_.error(fmt::format("system '{}' answered unsupported: {}", r_.system, e.what()));
    } catch (const gpu::CudaError& e) {
      return cmp_.error(fmt::format("system '{}': {}", r_.system, e.what()));
    }
  }

 private:
  ScaleResult run_on_device(const gpu::GpuTargetFn& fn) {
    gpu::GpuContext ctx;
    const oracle::TargetDef& def = *options_.target;
    const Attributes attrs = oracle::with_defaults(def.spec, options_.attributes);

    auto t = Clock::now();
    gpu::KroneckerGraph k = gpu::generate_kronecker(ctx, {.scale = scale_, .seed = options_.seed});
    const std::int64_t n = k.nodes, edges = k.num_edges();
    gpu::DeviceGraph g(ctx, n, n, std::move(k.row_ptr), std::move(k.col_idx));
    if (!def.spec.gpu.reads_edge_perm) g.declare_symmetric_pattern();
    r_.graph_summary = fmt::format("{} × {}, {} edges", n, n, edges);
    r_.seconds.graph = seconds_since(t);
    require_restrictable(def, options_.attributes, n, n, r_.graph_summary);

    // Sampling and the neighbourhood's structure: the sampled rows' offsets and columns only.
    t = Clock::now();
    const DeviceGraphRows graph_rows(ctx, g.row_ptr(), g.col_idx(), n, n);
    r_.rows = sample_rows(graph_rows, sampling_options(options_));
    const std::vector<index_t> ids = row_ids(r_.rows);
    r_.seconds.sampling = seconds_since(t);
    t = Clock::now();
    std::vector<index_t> first(ids.size());
    std::vector<RowExtent> extents(ids.size());
    index_t sampled_edges = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
      first[i] = sampled_edges;
      extents[i] = {r_.rows[i].first_edge, r_.rows[i].first_edge + r_.rows[i].in_degree};
      sampled_edges += r_.rows[i].in_degree;
    }
    std::vector<index_t> columns(static_cast<size_t>(sampled_edges));
    {
      const auto d_ids = upload_indices(ctx, ids);
      const auto d_first = upload_indices(ctx, first);
      DeviceBuffer<gpu::node_t> d_columns(ctx.allocator, sampled_edges);
      device::gather_row_columns(ctx, g.row_ptr(), g.col_idx(), d_ids.data(), d_first.data(), static_cast<std::int64_t>(ids.size()),
                                 d_columns.data());
      const std::vector<gpu::node_t> narrow = d_columns.download(ctx.stream);
#pragma omp parallel for schedule(static) if (worth_parallel(sampled_edges))
      for (index_t e = 0; e < sampled_edges; ++e) columns[static_cast<size_t>(e)] = narrow[static_cast<size_t>(e)];
    }
    auto out_degrees = [&graph_rows](std::span<const index_t> sources) {  // A = Aᵀ: out-degree = in-degree
      const std::vector<RowExtent> ext = graph_rows.extents(sources);
      std::vector<index_t> d(ext.size());
      for (size_t j = 0; j < ext.size(); ++j) d[j] = ext[j].degree();
      return d;
    };
    // The sources numbered on the device: its map of first uses has one entry per node.
    auto number_sources = [&ctx](std::span<const index_t> first, std::span<const index_t> entries, index_t n_src) {
      device::FirstUse d = device::number_by_first_use(ctx, first.data(), static_cast<std::int64_t>(first.size()), entries.data(),
                                                       static_cast<std::int64_t>(entries.size()), n_src);
      if (!d.in_range) throw InternalError(fmt::format("scale: a sampled column lies outside the graph's {} sources", n_src));
      return FirstUseNumbering{std::move(d.local), std::move(d.sources)};
    };
    const SampledGraph sampled{n, n, r_.graph_summary, extents, columns, out_degrees, number_sources};
    nb_ = restrict_graph_to_rows(def, options_.attributes, sampled, ids, options_.seed);
    r_.seconds.neighbourhood = seconds_since(t);  // its graph here; its inputs' gather after the system's run

    // The big case's shapes: the neighbourhood's, with the leading dimension of the whole graph.
    const auto sub_in_shapes = def.input_shapes(*nb_.sub.graph, oracle::with_defaults(def.spec, nb_.sub.attributes));
    const auto sub_out_shapes = def.output_shapes(*nb_.sub.graph, oracle::with_defaults(def.spec, nb_.sub.attributes));
    auto big_shape = [&](std::vector<index_t> shape, oracle::TensorKind kind) {
      if (kind == oracle::TensorKind::dst_nodes || kind == oracle::TensorKind::src_nodes) shape[0] = n;
      else if (kind == oracle::TensorKind::edges) shape[0] = edges;
      return shape;
    };

    // Inputs: big ones drawn on the device, parameters on the host (rounded to float32).
    t = Clock::now();
    gpu::TargetRun run(ctx, g, attrs);
    const float magnitude = static_cast<float>(options_.input_magnitude);
    for (const auto& in : def.spec.inputs) {
      const auto shape = sub_in_shapes.find(in.name);
      if (shape == sub_in_shapes.end()) continue;  // an optional parameter switched off
      if (in.kind == oracle::TensorKind::parameter) {
        Tensor p = rounded_to_float32(oracle::random_tensor(shape->second, options_.seed, in.name,
                                                            {.min_value = -options_.input_magnitude, .max_value = options_.input_magnitude}));
        run.inputs.emplace(in.name, DeviceTensor::upload(ctx, p));
        nb_.sub.parameters[in.name] = std::move(p);
        continue;
      }
      DeviceTensor x(ctx, big_shape(shape->second, in.kind));
      device::fill_uniform(ctx, x.size(), options_.seed, name_tag(in.name), magnitude, x.data());
      run.inputs.emplace(in.name, std::move(x));
    }
    // The output gradient: random on the sampled rows (their edges, for an edge output), 0 elsewhere.
    for (const auto& out : def.spec.outputs) {
      const NeighbourhoodRows where = neighbourhood_rows(nb_, out.kind, out.name);
      std::vector<index_t> compact_shape = sub_out_shapes.at(out.name);
      compact_shape[0] = static_cast<index_t>(where.big_rows.size());
      const Tensor values = rounded_to_float32(oracle::random_tensor(
          compact_shape, options_.seed, "grad_" + out.name, {.min_value = -options_.input_magnitude, .max_value = options_.input_magnitude}));
      DeviceTensor grad(ctx, big_shape(sub_out_shapes.at(out.name), out.kind));
      const DeviceTensor compact = DeviceTensor::upload(ctx, values);
      const auto d_rows = upload_indices(ctx, where.big_rows);
      device::scatter_rows(ctx, compact.data(), grad.row_size(), d_rows.data(), static_cast<std::int64_t>(where.big_rows.size()), grad.data());
      ctx.synchronize();
      run.grad_outputs.emplace(out.name, std::move(grad));
      std::vector<index_t> sub_shape = compact_shape;
      sub_shape[0] += where.zero_rows;
      Tensor with_padding(sub_shape);
      std::copy_n(values.data(), values.size(), with_padding.data());
      nb_.sub.grad_outputs[out.name] = std::move(with_padding);
    }
    ctx.synchronize();
    r_.seconds.inputs = seconds_since(t);

    // The system, on the whole graph, forward and backward.
    const std::int64_t peak_before_system = ctx.allocator.peak_bytes();
    ctx.allocator.reset_peak();
    t = Clock::now();
    fn(run);
    ctx.synchronize();
    r_.seconds.system = seconds_since(t);
    r_.system_peak_bytes = ctx.allocator.peak_bytes();

    // The neighbourhood's inputs (the device's float32 values), its exact answer and bounds.
    t = Clock::now();
    for (const auto& in : def.spec.inputs) {
      if (in.kind == oracle::TensorKind::parameter || !run.has_input(in.name)) continue;
      const NeighbourhoodRows where = neighbourhood_rows(nb_, in.kind, in.name);
      nb_.sub.inputs[in.name] = download_rows(ctx, run.input(in.name), where.big_rows, where.zero_rows);
    }
    r_.seconds.neighbourhood += seconds_since(t);
    const auto [exact, bounds] = evaluate_neighbourhood(r_, nb_, options_.tolerance);

    // Compare the sampled rows and parameters; hold every other gradient element to 0, on the device.
    t = Clock::now();
    DeviceBuffer<std::uint8_t> inside(ctx.allocator, n);  // a row mask: an edge is inside when its row is
    for (const CompareSlot& slot : compare_slots(def, sub_in_shapes)) {
      auto& answers = slot.is_output ? run.outputs : run.gradients;
      const auto it = answers.find(slot.name);
      const auto& sub_shape = (slot.is_output ? sub_out_shapes : sub_in_shapes).at(slot.name);
      const std::vector<index_t> shape = big_shape(sub_shape, slot.kind);
      if (it == answers.end()) return cmp_.error(fmt::format("system '{}' returned no {}", r_.system, slot.label));
      if (it->second.shape() != shape)
        return cmp_.error(fmt::format("system '{}' returned {} of shape {}, expected {}", r_.system, slot.label, it->second.shape(), shape));
      const Tensor& want = (slot.is_output ? exact.outputs : exact.gradients).at(slot.name);
      if (slot.kind == oracle::TensorKind::parameter) {
        const std::vector<index_t> every_row = all_rows(shape);
        cmp_.compare_inside({slot.label, slot.kind, every_row, shape}, it->second.download(ctx), want, bounds);
        continue;
      }
      const NeighbourhoodRows where = neighbourhood_rows(nb_, slot.kind, slot.name);
      cmp_.compare_inside({slot.label, slot.kind, where.big_rows, shape}, download_rows(ctx, it->second, where.big_rows, 0), want, bounds);
      if (slot.is_output) continue;
      // An edge gradient's inside is the sampled rows' edges: marked by row, found by the edge's row.
      const bool edge_tensor = slot.kind == oracle::TensorKind::edges;
      const std::span<const index_t> marked = edge_tensor ? std::span<const index_t>(nb_.rows) : where.big_rows;
      inside.zero(ctx.stream);
      const auto d_marked = upload_indices(ctx, marked);
      device::mark_rows(ctx, d_marked.data(), static_cast<std::int64_t>(marked.size()), inside.data());
      const device::ZeroCheck z = device::zero_check(ctx, it->second.data(), it->second.rows(), it->second.row_size(), inside.data(),
                                                     edge_tensor ? g.row_ptr() : nullptr, n);
      cmp_.record_outside({slot.label + " outside the neighbourhood", slot.kind, where.big_rows, shape},
                          {z.elements, z.nonzero, z.worst_flat, static_cast<double>(z.worst_value)});
    }
    r_.seconds.compare = seconds_since(t);
    r_.device_peak_bytes = std::max(peak_before_system, ctx.allocator.peak_bytes());
    return cmp_.conclude();
  }

  const std::map<std::string, gpu::GpuTargetFn>& targets_;
  int scale_;
  const ScaleOptions& options_;
  ScaleResult r_;
  Neighbourhood nb_;
  ScaleComparer cmp_;
};

}  // namespace

ScaleResult run_device_scale_check(const std::string& system_name, const std::map<std::string, gpu::GpuTargetFn>& targets,
                                   int kronecker_scale, const ScaleOptions& options) {
  return DeviceChecker(system_name, targets, kronecker_scale, options).run();
}

}  // namespace gnncheck::scale
