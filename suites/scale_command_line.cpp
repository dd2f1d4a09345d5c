#include "suites/scale_command_line.h"

#include <utility>

#include <fmt/format.h>

#include "suites/system_registry.h"

namespace gnncheck::suites {

std::string scale_command_line(const ScaleCommandLine& c) {
  std::string line = fmt::format("gnncheck scale {} --target {} --graph {} --rows {} --seed {}", c.system_flag, c.target,
                                 shell_quote(c.graph), c.rows, c.seed);
  if (c.hub_edges != scale::kDefaultHubEdgeBudget) line += fmt::format(" --hub-edges {}", c.hub_edges);
  if (c.hub_sources != scale::kDefaultHubSourceBudget) line += fmt::format(" --hub-sources {}", c.hub_sources);
  if (c.magnitude != 1.0) line += fmt::format(" --magnitude {}", c.magnitude);
  for (const auto& [flag, value] : {std::pair{"--features", &c.features}, std::pair{"--hidden-features", &c.hidden_features},
                                    std::pair{"--out-features", &c.out_features}, std::pair{"--heads", &c.heads},
                                    std::pair{"--norm", &c.norm}})
    if (*value) line += fmt::format(" {} {}", flag, shell_quote(**value));
  if (c.expect_caught) line += " --expect caught";
  return line;
}

}  // namespace gnncheck::suites
