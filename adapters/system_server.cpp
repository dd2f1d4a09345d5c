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
    if (system.supports(def.spec.name)) {
      const Precision stored = system.precision(def.spec.name), accumulated = system.accumulation(def.spec.name);
      const std::string precision(to_string(stored));
      const ImplementedAttributes implemented = system.implemented_attributes(def.spec.name);
      if (implemented.empty() && stored == accumulated) {
        targets[def.spec.name] = precision;
        continue;
      }
      if (implemented.empty()) {
        targets[def.spec.name] = {{"precision", precision}, {"accumulation", std::string(to_string(accumulated))}};
        continue;
      }
      nlohmann::json attributes = nlohmann::json::object();
      for (const auto& [attribute, values] : implemented) {
        nlohmann::json& into = attributes[attribute];
        for (const auto& v : values) std::visit([&into](const auto& value) { into.push_back(value); }, v);
      }
      targets[def.spec.name] = {{"precision", precision}, {"attributes", attributes}};
      if (stored != accumulated) targets[def.spec.name]["accumulation"] = std::string(to_string(accumulated));
    }
  const nlohmann::json hello = {{"protocol", protocol::kVersion}, {"name", name}, {"targets", targets}};

  return serve_protocol(hello.dump(), "gnncheck serve-system " + name,
                        [&](const protocol::LoadedCase& loaded) { return system.evaluate(loaded.c); });
}

int serve_protocol(const std::string& hello_json, const std::string& who,
                   const std::function<Result(const protocol::LoadedCase&)>& evaluate) {
  std::fflush(stdout);
  FILE* protocol_out = fdopen(dup(STDOUT_FILENO), "w");
  dup2(STDERR_FILENO, STDOUT_FILENO);
  std::fprintf(protocol_out, "%s%s\n", protocol::kHelloPrefix.data(), hello_json.c_str());
  std::fflush(protocol_out);

  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    const std::filesystem::path dir = line;
    try {
      const protocol::LoadedCase loaded = protocol::read_case(dir);
      protocol::write_result(dir, loaded.manifest, evaluate(loaded));
    } catch (const std::exception& e) {
      // A case that cannot be read or evaluated is answered as an error of this case, not a crash.
      std::cerr << who << ": " << e.what() << '\n';
      Result r;
      r.status = Status::error;
      r.message = fmt::format("{}: {}", who, e.what());
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
