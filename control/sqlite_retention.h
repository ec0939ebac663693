// The statements behind retention (docs/control-plane.md, "Retention") and
// idempotency key expiry, for SqliteStore. Internal to control/.
//
// Invariants kept here: a finished job (succeeded, failed, cancelled) always
// has an end time (ApplyOne sets one; MigrateForRetention gives one to rows
// from before), so `ended_at < cutoff` finds every finished job; and a
// deleted job's sequence number is remembered (meta.deleted_max_seq), so its
// id is never given to a new job, even when the newest jobs were deleted.
#pragma once

#include <string>
#include <vector>

#include "control/sqlite.h"
#include "control/store.h"

namespace meridian::control {

// Adds what retention needs to a database made before it: idempotency
// keys' creation time (a key made before is dated by its job's submission),
// an end time for finished jobs without one (their last event's), the meta
// table and the indexes the sweeps use. Run on every open; a no-op once done.
Status MigrateForRetention(Db& db);

// The highest sequence number a deleted job had (0: none deleted).
Result<int64_t> DeletedMaxSeq(Db& db);

// Submit's key lookup: the stored key of (tenant, key), or nullopt when there
// is none or it was made at or before `expired_at` (then it is deleted, so a
// new job takes the key).
struct StoredKey {
  std::string body_hash, job_id;
};
Result<std::optional<StoredKey>> LiveKey(Db& db, const std::string& tenant, const std::string& key,
                                         UnixSeconds expired_at);

Result<std::vector<Store::FinishedJob>> SelectFinishedBefore(Db& db, UnixSeconds cutoff, int limit);
Result<std::vector<std::string>> DeleteFinished(Db& db, const std::vector<std::string>& ids,
                                                UnixSeconds cutoff);
Result<int64_t> DeleteKeysMadeBy(Db& db, UnixSeconds expired_at, int limit);

}  // namespace meridian::control
