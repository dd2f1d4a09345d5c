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

#include <functional>
#include <string>

#include "adapters/protocol.h"
#include "core/system.h"

namespace gnncheck {

// Serves `system` under the name `name` until stdin closes; returns the process exit code (0, or 2
// when the system is unavailable here: its reason goes to stderr before any hello).
int serve_system(System& system, const std::string& name);

// The adapter side of the protocol, shared by serve_system and gnncheck-plugin-host: prints the
// hello line (`hello_json`) on a private copy of stdout and points stdout at stderr (what the
// evaluator prints cannot corrupt the protocol), then answers every case directory read from stdin
// with `evaluate` until stdin closes. A case that cannot be read or evaluated is answered as an
// error of that case, prefixed with `who`. Returns 0.
int serve_protocol(const std::string& hello_json, const std::string& who,
                   const std::function<Result(const protocol::LoadedCase&)>& evaluate);

}  // namespace gnncheck
