// gnncheck/adapters/system_server.h — any System served as an adapter process (adapters/PROTOCOL.md).
//
// `gnncheck serve-system NAME` runs a built-in system this way, so that a GPU system built into
// gnncheck can be started under compute-sanitizer like any adapter (`gnncheck run --sanitize`): the
// hello declares every catalogue target the system supports with its precision, then every case
// directory read from stdin is evaluated and answered. Protocol lines go to a private copy of
// stdout; anything the system prints goes to stderr. Returns when stdin closes.
//
//   auto gpu = gnncheck::make_gpu_system();
//   return gnncheck::serve_system(*gpu, "gpu");
#pragma once

#include <string>

#include "core/system.h"

namespace gnncheck {

// Serves `system` under the name `name` until stdin closes; returns the process exit code (0, or 2
// when the system is unavailable here: its reason goes to stderr before any hello).
int serve_system(System& system, const std::string& name);

}  // namespace gnncheck
