// gnncheck/gpu/oracle_conventions.h — the oracle's degree conventions (oracle/degree_norm.h) as the
// GPU kernels' enums (gpu/degree_norm.cuh), for the targets that read them from a case's attributes.
//
//   const DegreeNorm norm = to_gpu(oracle::parse_degree_norm(run.attributes.get_string("norm")));
#pragma once

#include "gpu/degree_norm.cuh"
#include "oracle/degree_norm.h"

namespace gnncheck::gpu {

inline DegreeNorm to_gpu(oracle::DegreeNorm norm) {
  return norm == oracle::DegreeNorm::symmetric ? DegreeNorm::symmetric : DegreeNorm::row_mean;
}
inline SourceDegree to_gpu(oracle::SourceDegree d) { return d == oracle::SourceDegree::in ? SourceDegree::in : SourceDegree::out; }
inline ZeroDegree to_gpu(oracle::ZeroDegree d) { return d == oracle::ZeroDegree::one ? ZeroDegree::one : ZeroDegree::zero; }

}  // namespace gnncheck::gpu
