#include "adapters/system_server.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "adapters/protocol.h"
#include "oracle/targets.h"

namespace gnncheck {

int serve_system(System& system, const std::string& name) {
  const Availability availability = system.availability();
  if (!availability.available) {
    std::cerr << "gnncheck serve-system " << name << ": not available here: " << availability.reason << '\n';
    return 2;
  }
  nlohmann::json targets = nlohmann::json::object();
  for (const auto& def : oracle::all_targets())
    if (system.supports(def.spec.name)) targets[def.spec.name] = std::string(to_string(system.precision(def.spec.name)));
  const nlohmann::json hello = {{"protocol", protocol::kVersion}, {"name", name}, {"targets", targets}};

  std::fflush(stdout);
  FILE* protocol_out = fdopen(dup(STDOUT_FILENO), "w");
  dup2(STDERR_FILENO, STDOUT_FILENO);
  std::fprintf(protocol_out, "%s%s\n", protocol::kHelloPrefix.data(), hello.dump().c_str());
  std::fflush(protocol_out);

  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    const std::filesystem::path dir = line;
    try {
      const protocol::LoadedCase loaded = protocol::read_case(dir);
      const Result r = system.evaluate(loaded.c);
      protocol::write_result(dir, loaded.manifest, r);
    } catch (const std::exception& e) {
      std::cerr << "gnncheck serve-system " << name << ": " << e.what() << '\n';
      Result r;
      r.status = Status::error;
      r.message = fmt::format("gnncheck serve-system {}: {}", name, e.what());
      try {
        protocol::write_result(dir, protocol::CaseManifest{}, r);
      } catch (const std::exception&) {
      }
    }
    std::fprintf(protocol_out, "%s%s\n", protocol::kDonePrefix.data(), line.c_str());
    std::fflush(protocol_out);
  }
  return 0;
}

}  // namespace gnncheck
