// gnncheck/scale/scale_entry.h — what the entry points of a scale check share: the command
// (`gnncheck scale`, suites/cli/scale_command.cpp) and the in-process Python call
// (`gnncheck.check_scale`, python/src/scale_session.cpp). Each names its options in its own
// spelling (`--hidden-features`, `hidden_features`); the rules and the messages are these.
//
//   gnncheck::Attributes a = gnncheck::scale::target_attributes("gat", {.features = 16, .heads = 2},
//                                                                gnncheck::scale::OptionSpelling::python);
//   gnncheck::scale::write_sampled_rows(result, "out/scale_rows.json");
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/case.h"
#include "scale/scale_check.h"

namespace gnncheck::scale {

// The width options of a scale check: `features` is the input width (`features` of an op,
// `in_features` of a layer); the others set the attribute of their name.
struct TargetOptions {
  std::optional<std::int64_t> features, hidden_features, out_features, heads;
  std::optional<std::string> norm;
};

enum class OptionSpelling { command_line, python };
// "hidden_features" as the entry point spells it: "--hidden-features" or "hidden_features".
std::string option_name(std::string_view option, OptionSpelling spelling);

// The target's attributes from the options (unset ones take the target's defaults). Throws
// InputError naming the option — an option the target has no attribute for, or a value the
// target refuses (tried on a 2-node case, so the error comes before any graph is built).
Attributes target_attributes(const std::string& target, const TargetOptions& options, OptionSpelling spelling);

// scale_rows.json beside a report: every sampled row with its stratum and in-degree, the
// neighbourhood's size, the worst element, the seconds and the re-run line. Throws InputError
// when the file cannot be written.
void write_sampled_rows(const ScaleResult& r, const std::filesystem::path& file);

}  // namespace gnncheck::scale
