// The utilization table's statements (schema.h), for SqliteStore. Internal
// to control/.
#pragma once

#include <string>
#include <vector>

#include "control/sqlite.h"
#include "control/store.h"

namespace meridian::control {

// Inserts the rows (a row at an instant already stored replaces it), then
// drops each job's rows older than its newest `keep_per_job`.
Status InsertUtilization(Db& db, const std::vector<UtilizationRow>& rows, int keep_per_job);
Result<std::vector<UtilizationRow>> ReadUtilization(Db& db, const std::string& job_id, int limit);

}  // namespace meridian::control
