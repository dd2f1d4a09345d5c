// gnncheck/adapters/plugin_system.h — a System backed by a C plugin (gnncheck/plugin.h).
//
// The plugin is loaded with dlopen, but never into gnncheck's own process: gnncheck-plugin-host
// loads it and speaks the adapter protocol (adapters/PROTOCOL.md), so a plugin is a process system
// with every guarantee of one — a kernel that segfaults ends its case with status `crashed`, one
// that hangs with `timeout`, and the next case gets a fresh host.
//
//   auto mine = gnncheck::make_plugin_system("build/libmy_kernels.so");
//   gnncheck::Result r = mine->evaluate(c);
#pragma once

#include <filesystem>
#include <memory>

#include "adapters/process_system.h"

namespace gnncheck {

struct PluginSystemOptions {
  ProcessSystemOptions process;  // timeouts, work directory, name override
  std::filesystem::path host;    // gnncheck-plugin-host to use; empty: plugin_host_path()
};

// Where gnncheck-plugin-host is: $GNNCHECK_PLUGIN_HOST if set, else next to the running program,
// else the one this build produced. Throws InputError naming every place it looked.
std::filesystem::path plugin_host_path();

// Throws InputError when `library` does not exist or the host cannot be found; problems of the
// library itself (not loadable, no entry point, another ABI version) make the system unavailable
// with the host's explanation.
std::unique_ptr<System> make_plugin_system(const std::filesystem::path& library, PluginSystemOptions options = {});

}  // namespace gnncheck
