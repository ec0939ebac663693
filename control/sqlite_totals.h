// The dashboard's totals as SQL aggregates, for SqliteStore (store.h,
// JobTotals and Preemptions): the Overview counts and sums every visible job
// without loading one; and the reconcile loop's marks of the active jobs
// (ActiveMarks), read without their specs. Internal to control/.
#pragma once

#include <string>
#include <vector>

#include "control/sqlite.h"
#include "control/store.h"

namespace meridian::control {

Result<std::vector<Store::JobTotal>> SelectJobTotals(Db& db, const std::string& tenant);
Result<int64_t> CountPreemptions(Db& db, const std::string& tenant);
Result<std::vector<Store::ActiveMark>> SelectActiveMarks(Db& db);
// The marks of the jobs whose ids `ids_json` (a JSON array) lists, finished
// ones too, by seq.
Result<std::vector<Store::ActiveMark>> SelectMarksOf(Db& db, const std::string& ids_json);

}  // namespace meridian::control
