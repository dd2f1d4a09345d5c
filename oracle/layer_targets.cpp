#include "oracle/targets.h"

namespace gnncheck::oracle {

std::vector<TargetDef> layer_targets() { return {}; }

}  // namespace gnncheck::oracle
