// The false-alarm campaign: every check, every target, every graph family of the generators
// (square and non-square in both orientations; the layers' blocks with n_dst < n_src), on correct
// systems — cpu_float32, cpu_float32_shuffled_rows (a summation order the tolerance model never
// samples), the float64 oracle, and on the targets with a kink (GIN, GAT, AGNN: checks/kinks.h)
// cpu_float32_right_derivatives, the other one-sided derivative at every kink (elsewhere it is
// cpu_float32 exactly), and on edge_softmax cpu_float32_online_softmax (a running-max softmax in one
// pass, its backward in the distributive form). No case may fail; a (system, target, check) whose check applies
// must have conclusive cases; the counts of not-applicable and inconclusive cases are printed.
//
// GNNCHECK_CAMPAIGN_CASES (compile definition; the environment variable of the same name
// overrides it) is the number of cases per (system, target, check), GNNCHECK_CAMPAIGN_SEED the
// seed, GNNCHECK_CAMPAIGN_TARGETS / GNNCHECK_CAMPAIGN_CHECKS / GNNCHECK_CAMPAIGN_SYSTEMS
// comma-separated subsets (a subset draws exactly the cases the whole campaign draws for it, so
// a campaign can be split across processes).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "adapters/replicas/half_precision.h"
#include "oracle/cpu_systems.h"
#include "oracle/targets.h"
#include "properties/driver.h"
#include "properties/tests/wrong_systems.h"

#ifndef GNNCHECK_CAMPAIGN_CASES
#define GNNCHECK_CAMPAIGN_CASES 2000
#endif

namespace gnncheck::properties {
namespace {

using checks::CheckKind;
using checks::Conclusion;

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::stoi(v) : fallback;
}

bool selected(const char* variable, const std::string& name) {
  const char* v = std::getenv(variable);
  if (!v || !*v) return true;
  std::stringstream list(v);
  for (std::string item; std::getline(list, item, ',');)
    if (item == name) return true;
  return false;
}

// Whether `variable` lists `name` (unset or empty: no).
bool named(const char* variable, const std::string& name) {
  const char* v = std::getenv(variable);
  return v && *v && selected(variable, name);
}

// Whether `check` says something about `target` on `system` at all (else every case is not
// applicable, which is then the expected outcome).
bool applies(CheckKind check, System& system, const std::string& target) {
  if (check == CheckKind::gradient) return system.precision(target) == Precision::float64;
  if (check == CheckKind::resources) return false;  // these systems measure no memory
  if (check == CheckKind::op_order) {
    for (const auto& slot : oracle::find_target(target).spec.inputs)
      if (slot.kind == oracle::TensorKind::edges || slot.kind == oracle::TensorKind::edges_csc) return false;
    for (const auto& slot : oracle::find_target(target).spec.outputs)
      if (slot.kind == oracle::TensorKind::edges || slot.kind == oracle::TensorKind::edges_csc) return false;
  }
  return true;
}

class Campaign : public ::testing::TestWithParam<std::string> {};

TEST_P(Campaign, NoCheckRaisesAFalseAlarmOnACorrectSystem) {
  const std::string& target = GetParam();
  if (!selected("GNNCHECK_CAMPAIGN_TARGETS", target)) GTEST_SKIP() << "not in GNNCHECK_CAMPAIGN_TARGETS";
  auto float32 = make_cpu_float32_system();
  auto oracle_system = make_oracle_system();
  auto right_derivatives = make_cpu_float32_right_derivatives_system();
  auto online_softmax = make_cpu_float32_online_softmax_system();
  testing::ShuffledOrderFloat32 shuffled;
  std::vector<System*> systems{float32.get(), &shuffled, oracle_system.get()};
  // Every target with a kink also runs the control that takes the other one-sided derivative there.
  if (oracle::find_target(target).kinks.evaluate_f32_right) systems.push_back(right_derivatives.get());
  if (target == "edge_softmax") systems.push_back(online_softmax.get());
  // The controls of the precision replicas (float16, bfloat16 or TF32 storage with float32 sums), when
  // GNNCHECK_CAMPAIGN_SYSTEMS names them: their campaigns are in docs/campaigns.md, not in CI's.
  auto half = make_half_storage_system(Precision::float16), bhalf = make_half_storage_system(Precision::bfloat16);
  auto tf32 = make_half_storage_system(Precision::tf32);
  auto half_kernel = make_half_kernel_system();
  for (System* control : {half.get(), bhalf.get(), tf32.get(), half_kernel.get()})
    if (named("GNNCHECK_CAMPAIGN_SYSTEMS", control->name()) && control->supports(target)) systems.push_back(control);
  const int cases = env_int("GNNCHECK_CAMPAIGN_CASES", GNNCHECK_CAMPAIGN_CASES);
  const auto seed = static_cast<std::uint64_t>(env_int("GNNCHECK_CAMPAIGN_SEED", 2027));
  for (CheckKind check : checks::all_check_kinds()) {
    if (!selected("GNNCHECK_CAMPAIGN_CHECKS", std::string(to_string(check)))) continue;
    for (System* system : systems) {
      if (!selected("GNNCHECK_CAMPAIGN_SYSTEMS", system->name())) continue;
      PropertyOptions o;
      o.cases = cases;
      o.seed = seed + static_cast<std::uint64_t>(check) * 1000;
      o.case_options.graph.max_nodes = 40;
      o.case_options.graph.max_average_degree = 8;
      std::map<std::string, int> reasons;  // why cases were inconclusive, by the first words
      o.on_verdict = [&](const checks::Verdict& v) {
        if (v.conclusion == Conclusion::inconclusive) ++reasons[v.detail.substr(0, 60)];
      };
      const auto start = std::chrono::steady_clock::now();
      const PropertyOutcome out = run_property(check, *system, target, o);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      EXPECT_NE(out.conclusion, Conclusion::fail) << out.report;
      EXPECT_NE(out.conclusion, Conclusion::error) << out.report;
      if (applies(check, *system, target))
        EXPECT_EQ(out.conclusion, Conclusion::pass) << out.report;
      else
        EXPECT_EQ(out.conclusion, Conclusion::not_applicable) << out.report;
      std::cout << fmt::format("{:<26} {:<12} {:<24} {:5} conclusive of {:5}, {:5} n/a, {:5} inconclusive, worst {:.3g} "
                               "of bound, {:.1f} s\n",
                               system->name(), target, to_string(check), out.conclusive, out.cases, out.not_applicable,
                               out.inconclusive, out.worst_passing_ratio, seconds);
      for (const auto& [reason, n] : reasons) std::cout << fmt::format("    {:5} × {}\n", n, reason);
    }
  }
}

std::vector<std::string> target_names() {
  std::vector<std::string> names;
  for (const auto& def : oracle::all_targets()) names.push_back(def.spec.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(AllTargets, Campaign, ::testing::ValuesIn(target_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace gnncheck::properties
