#include "core/case.h"

#include <bit>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

namespace gnncheck {
namespace {

template <class Want>
[[noreturn]] void wrong_type(const std::string& name, const AttrValue& v, std::string_view wanted) {
  throw InputError(fmt::format("attribute '{}': expected {}, got {} ({})", name, wanted, type_name(v), to_string(v)));
}

}  // namespace

const AttrValue& Attributes::require(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw InputError(fmt::format("attribute '{}' is required but missing", name));
  return it->second;
}

std::int64_t Attributes::get_int(const std::string& name) const {
  const AttrValue& v = require(name);
  if (auto* p = std::get_if<std::int64_t>(&v)) return *p;
  wrong_type<std::int64_t>(name, v, "an integer");
}
std::int64_t Attributes::get_int(const std::string& name, std::int64_t fallback) const {
  return has(name) ? get_int(name) : fallback;
}
double Attributes::get_double(const std::string& name) const {
  const AttrValue& v = require(name);
  if (auto* p = std::get_if<double>(&v)) return *p;
  if (auto* p = std::get_if<std::int64_t>(&v)) return static_cast<double>(*p);
  wrong_type<double>(name, v, "a number");
}
double Attributes::get_double(const std::string& name, double fallback) const {
  return has(name) ? get_double(name) : fallback;
}
bool Attributes::get_bool(const std::string& name) const {
  const AttrValue& v = require(name);
  if (auto* p = std::get_if<bool>(&v)) return *p;
  wrong_type<bool>(name, v, "a boolean");
}
bool Attributes::get_bool(const std::string& name, bool fallback) const {
  return has(name) ? get_bool(name) : fallback;
}
std::string Attributes::get_string(const std::string& name) const {
  const AttrValue& v = require(name);
  if (auto* p = std::get_if<std::string>(&v)) return *p;
  wrong_type<std::string>(name, v, "a string");
}
std::string Attributes::get_string(const std::string& name, const std::string& fallback) const {
  return has(name) ? get_string(name) : fallback;
}

std::string_view type_name(const AttrValue& v) {
  switch (v.index()) {
    case 0: return "a boolean";
    case 1: return "an integer";
    case 2: return "a number";
    default: return "a string";
  }
}

std::string to_plain_string(const AttrValue& v) {
  return std::holds_alternative<std::string>(v) ? std::get<std::string>(v) : to_string(v);
}

std::string to_string(const AttrValue& v) {
  switch (v.index()) {
    case 0: return std::get<bool>(v) ? "true" : "false";
    case 1: return fmt::format("{}", std::get<std::int64_t>(v));
    case 2: return fmt::format("{}", std::get<double>(v));
    default: return fmt::format("\"{}\"", std::get<std::string>(v));
  }
}

std::string_view to_string(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::unsupported: return "unsupported";
    case Status::error: return "error";
    case Status::crashed: return "crashed";
    case Status::timeout: return "timeout";
    case Status::invalid_output: return "invalid_output";
  }
  return "unknown";
}

std::string_view to_string(Precision p) {
  switch (p) {
    case Precision::float64: return "float64";
    case Precision::float32: return "float32";
    case Precision::tf32: return "tf32";
    case Precision::bfloat16: return "bfloat16";
    case Precision::float16: return "float16";
  }
  return "unknown";
}

Precision parse_precision(std::string_view name) {
  for (Precision p : {Precision::float64, Precision::float32, Precision::tf32, Precision::bfloat16, Precision::float16})
    if (to_string(p) == name) return p;
  throw InputError(fmt::format("unknown precision '{}': expected float64, float32, tf32, bfloat16 or float16", name));
}

namespace {
// Exponent bits: the range of a format (float16's 5 bits end at 65504).
int exponent_bits(Precision p) {
  switch (p) {
    case Precision::float64: return 11;
    case Precision::float32:
    case Precision::tf32:
    case Precision::bfloat16: return 8;
    case Precision::float16: return 5;
  }
  return 0;
}
}  // namespace

bool accumulation_fits(Precision storage, Precision accumulation) {
  return unit_roundoff(accumulation) <= unit_roundoff(storage) && exponent_bits(accumulation) >= exponent_bits(storage);
}

std::string precision_text(Precision storage, Precision accumulation) {
  if (storage == accumulation) return std::string(to_string(storage));
  return fmt::format("{} ({} accumulation)", to_string(storage), to_string(accumulation));
}

double gamma(double n, double u) {
  const double nu = n * u;
  if (nu >= 0.5) return 1.0;
  return nu / (1.0 - nu);
}

double unit_roundoff(Precision p) {
  // Round-to-nearest unit roundoff u = 2^-t for a t-bit significand (including the hidden bit).
  switch (p) {
    case Precision::float64: return std::ldexp(1.0, -53);
    case Precision::float32: return std::ldexp(1.0, -24);
    case Precision::tf32: return std::ldexp(1.0, -11);
    case Precision::bfloat16: return std::ldexp(1.0, -8);
    case Precision::float16: return std::ldexp(1.0, -11);
  }
  return 1.0;
}

namespace {

// A float32 rounded to `stored_bits` explicit significand bits, round to nearest even.
float round_significand(float x, int stored_bits) {
  if (!std::isfinite(x)) return x;
  const int drop = 23 - stored_bits;
  std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  const std::uint32_t half = 1u << (drop - 1);
  const std::uint32_t lsb = (bits >> drop) & 1u;
  bits += half - 1 + lsb;
  bits &= ~((1u << drop) - 1);
  return std::bit_cast<float>(bits);
}

}  // namespace

double round_to_precision(double x, Precision p) {
  switch (p) {
    case Precision::float64: return x;
    case Precision::float32: return static_cast<double>(static_cast<float>(x));
    case Precision::tf32: return round_significand(static_cast<float>(x), 10);
    case Precision::bfloat16: return round_significand(static_cast<float>(x), 7);
    case Precision::float16: {
      const double r = round_significand(static_cast<float>(x), 10);
      return std::abs(r) > 65504.0 ? std::copysign(INFINITY, r) : r;
    }
  }
  return x;
}

Tensor rounded(const Tensor& t, Precision p) {
  Tensor out = t;
  for (double& v : out.values()) v = round_to_precision(v, p);
  return out;
}

}  // namespace gnncheck
