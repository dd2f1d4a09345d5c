#include "suites/cli/skeleton_command.h"

#include <fstream>
#include <iostream>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "oracle/targets.h"
#include "suites/cli/skeleton.h"

namespace gnncheck::suites {
namespace {

namespace fs = std::filesystem;

// The folder holding the adapter kit (gnncheck_adapter.py): installed next to the command, else the source tree's.
fs::path adapter_kit_dir(const fs::path& executable_dir) {
  std::vector<fs::path> candidates = {executable_dir / ".." / "share" / "gnncheck" / "python", fs::path(GNNCHECK_SOURCE_ADAPTER_KIT_DIR)};
  std::vector<std::string> tried;
  std::error_code ec;
  for (const auto& dir : candidates) {
    if (fs::is_regular_file(dir / "gnncheck_adapter.py", ec)) return fs::weakly_canonical(dir);
    tried.push_back(fs::weakly_canonical(dir / "gnncheck_adapter.py").string());
  }
  throw InputError(fmt::format("gnncheck skeleton --lang python: the adapter kit gnncheck_adapter.py was not found; looked for: {}",
                               fmt::join(tried, ", ")));
}

}  // namespace

std::string skeleton_text(const std::string& target, const std::string& lang, const std::string& precision,
                          const fs::path& kit_dir) {
  const Skeleton s = make_skeleton(oracle::find_target(target));
  if (lang == "python") return python_skeleton(s, precision, kit_dir);
  if (lang == "torch") return torch_skeleton(s, precision);
  if (lang == "c") return c_skeleton(s, precision);
  throw InputError(fmt::format("gnncheck skeleton --lang {}: expected python, torch or c", lang));
}

CLI::App* add_skeleton_command(CLI::App& app, SkeletonCommandArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "skeleton", "Write a stub adapter (python, torch) or C plugin for one target, every tensor, attribute and shape filled in; "
                  "it answers unsupported until the math is written");
  cmd->add_option("--target", args.target, "The op or layer (see `gnncheck list targets`)")->required();
  cmd->add_option("--lang", args.lang,
                  "python: an adapter process with the adapter kit (numpy); torch: a check in process with the Python package "
                  "(import gnncheck); c: a plugin (gnncheck/plugin.h)")
      ->required()
      ->check(CLI::IsMember({"python", "torch", "c"}));
  cmd->add_option("--precision", args.precision, "The precision the stub declares (what the kernel will compute in)")
      ->check(CLI::IsMember({"float64", "float32", "tf32", "bfloat16", "float16"}))
      ->capture_default_str();
  cmd->add_option("--output", args.output, "Write to this file (it must not exist yet); default: standard output");
  return cmd;
}

int run_skeleton_command(const SkeletonCommandArgs& args, const fs::path& executable_dir) {
  const fs::path kit = args.lang == "python" ? adapter_kit_dir(executable_dir) : fs::path();
  const std::string text = skeleton_text(args.target, args.lang, args.precision, kit);
  if (args.output.empty()) {
    std::cout << text;
    return 0;
  }
  std::error_code ec;
  if (fs::exists(args.output, ec))
    throw InputError(fmt::format("gnncheck skeleton --output {}: the file exists; it is not overwritten (remove it first)", args.output));
  std::ofstream out(args.output);
  out << text;
  out.close();
  if (!out) throw InputError(fmt::format("gnncheck skeleton --output {}: cannot write the file", args.output));
  if (args.lang == "python") fs::permissions(args.output, fs::perms::owner_exec | fs::perms::group_exec, fs::perm_options::add, ec);
  return 0;
}

}  // namespace gnncheck::suites
