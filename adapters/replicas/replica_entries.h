// gnncheck/adapters/replicas/replica_entries.h — the table of CPU bug replicas, as written
// (replica_entries.cpp): each one's origin, bug, expected check and the targets it is written for.
// replica_catalogue.cpp resolves an entry into a ReplicaInfo (targets the oracle knows, bug class,
// shape). Internal to adapters/replicas/.
#pragma once

#include <vector>

#include "adapters/replicas/replicas.h"

namespace gnncheck {

// Targets the bug is written for; the catalogue keeps those the oracle knows today.
struct CatalogueEntry {
  ReplicaInfo info;
  bool every_target = false;  // generic bugs (leak, width tail) apply to every target
};

std::vector<CatalogueEntry> replica_entries();

}  // namespace gnncheck
