// `meridian mig openb --trace PODS.csv`: the openb trace's pods on the trace's
// own nodes, whole GPUs vs the trace's own sharing vs MIG slices
// (mig/fractional.h; docs/mig.md, "Fractional GPUs in the openb trace").
#pragma once

#include <ostream>
#include <string>

#include "catalog/catalog.h"

namespace meridian::cli {

// `mig_gpu`: every GPU of the trace taken as this MIG model too (a
// hypothetical fleet), beside the trace's own types; empty: not shown.
int RunMigOpenb(const catalog::Catalog& cat, const std::string& trace, const std::string& mig_gpu,
                bool json, std::ostream& out, std::ostream& err);

}  // namespace meridian::cli
