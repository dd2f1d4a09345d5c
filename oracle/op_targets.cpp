#include "oracle/targets.h"

namespace gnncheck::oracle {

std::vector<TargetDef> op_targets() { return {}; }

}  // namespace gnncheck::oracle
