// The statements of PgStore's leader lease and fence (store.h, TakeLease,
// RenewLease, FenceWrites) and of the reconcile loop's marks (ActiveMarks).
// The lease is timed by the database's clock, so replicas whose clocks
// disagree still agree on when it expires. Internal to control/.
#pragma once

#include <string>
#include <vector>

#include "control/pg.h"
#include "control/store.h"

namespace meridian::control {

// The new epoch when the lease was free or expired, else 0.
Result<int64_t> TakePgLease(PgConn& db, const std::string& holder, int64_t lease_ms);
// False when the lease has another epoch or holder.
Result<bool> RenewPgLease(PgConn& db, const std::string& holder, int64_t epoch, int64_t lease_ms);
// Inside a write transaction: OK when `epoch` is still the lease's, with the
// lease row locked (FOR SHARE) so no takeover commits before this
// transaction does; else an error saying this replica no longer leads
// (IsDeposed, control/backend.h). The server refuses (meridian_fence), so
// in a pipeline (PgConn::Send), whose answers come at its Sync, nothing sent
// after the check in its transaction runs, its COMMIT included.
Status CheckPgFence(PgConn& db, int64_t epoch);

Result<std::vector<Store::ActiveMark>> SelectPgActiveMarks(PgConn& db);
// Store::ChangedMarks: the jobs whose mark_xid (migration 4) is at or past
// `*cursor`, the oldest transaction still running when the last read was
// taken; `*cursor` becomes this read's. 0 reads every unfinished job.
Result<std::vector<Store::ActiveMark>> SelectPgChangedMarks(PgConn& db, int64_t* cursor);

// The holder of an unexpired lease; "" when none holds it.
Result<std::string> SelectPgLeaseHolder(PgConn& db);

}  // namespace meridian::control
