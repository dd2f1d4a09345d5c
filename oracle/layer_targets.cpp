// The catalogue's layers, each entry in its own file (oracle/<layer>_target.cpp).
#include "oracle/targets.h"

namespace gnncheck::oracle {

std::vector<TargetDef> layer_targets() {
  return {gcn_target(), gin_target(), gat_target(), sage_target(), agnn_target(), gine_target(), gatv2_target(),
          rgcn_target(), rgat_target()};
}

}  // namespace gnncheck::oracle
