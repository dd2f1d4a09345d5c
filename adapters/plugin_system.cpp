#include "adapters/plugin_system.h"

#include <unistd.h>

#include <cstdlib>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gnncheck {
namespace fs = std::filesystem;

fs::path plugin_host_path() {
  constexpr const char* kHostName = "gnncheck-plugin-host";
  std::vector<std::string> looked;
  if (const char* env = std::getenv("GNNCHECK_PLUGIN_HOST"); env && *env) {
    if (fs::is_regular_file(env)) return env;
    looked.push_back(fmt::format("$GNNCHECK_PLUGIN_HOST = {}", env));
  }
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const fs::path& candidate : {self.parent_path() / kHostName, self.parent_path() / "../libexec/gnncheck" / kHostName}) {
      if (fs::is_regular_file(candidate)) return candidate;
      looked.push_back(candidate.string());
    }
  }
#ifdef GNNCHECK_PLUGIN_HOST_BUILD_PATH
  if (fs::is_regular_file(GNNCHECK_PLUGIN_HOST_BUILD_PATH)) return GNNCHECK_PLUGIN_HOST_BUILD_PATH;
  looked.push_back(GNNCHECK_PLUGIN_HOST_BUILD_PATH);
#endif
  throw InputError(fmt::format("cannot find {} (it runs plugins in their own process); looked at: {}. Set "
                               "GNNCHECK_PLUGIN_HOST to its path.", kHostName, fmt::join(looked, ", ")));
}

std::unique_ptr<System> make_plugin_system(const fs::path& library, PluginSystemOptions options) {
  if (!fs::is_regular_file(library))
    throw InputError(fmt::format("plugin '{}': no such file", library.string()));
  const fs::path host = options.host.empty() ? plugin_host_path() : options.host;
  // An absolute path, so that dlopen does not search the library path for a relative name.
  const std::string absolute = fs::absolute(library).string();
  if (options.process.description.empty())
    options.process.description = fmt::format("plugin '{}' (run by {})", absolute, host.string());
  return make_process_system(std::vector<std::string>{host.string(), absolute}, std::move(options.process));
}

}  // namespace gnncheck
