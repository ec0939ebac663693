// Strong ids: small integer wrappers, one type per kind of thing, so a NodeId
// cannot be passed where a JobId is expected. An id is a dense index assigned
// by whoever owns the collection (the fleet numbers its nodes 0..N-1, the
// queue its jobs); kInvalid marks "none". Ids are trivially copyable values,
// hashable and ordered.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>

namespace meridian {

template <typename Tag, typename Rep = uint32_t>
class StrongId {
 public:
  using rep = Rep;
  static constexpr Rep kInvalidValue = std::numeric_limits<Rep>::max();

  constexpr StrongId() = default;
  constexpr explicit StrongId(Rep v) : value_(v) {}
  static constexpr StrongId Invalid() { return StrongId(); }

  constexpr Rep value() const { return value_; }
  constexpr bool valid() const { return value_ != kInvalidValue; }
  // The id as an index into a vector the owner keeps.
  constexpr size_t index() const { return static_cast<size_t>(value_); }

  constexpr auto operator<=>(const StrongId&) const = default;

 private:
  Rep value_ = kInvalidValue;
};

using JobId = StrongId<struct JobIdTag>;
using TenantId = StrongId<struct TenantIdTag>;
using NodeId = StrongId<struct NodeIdTag>;
using ClusterId = StrongId<struct ClusterIdTag, uint16_t>;
// Indexes into the catalog's vectors (gpus(), regions(), offerings()).
using GpuModelId = StrongId<struct GpuModelIdTag, uint16_t>;
using RegionId = StrongId<struct RegionIdTag, uint16_t>;
using OfferingId = StrongId<struct OfferingIdTag>;
// A set of nodes the ledger indexes by free capacity (one GPU model, or one
// GPU model in one cluster); numbered by the fleet.
using PoolId = StrongId<struct PoolIdTag>;

}  // namespace meridian

template <typename Tag, typename Rep>
struct std::hash<meridian::StrongId<Tag, Rep>> {
  size_t operator()(meridian::StrongId<Tag, Rep> id) const noexcept {
    return std::hash<Rep>()(id.value());
  }
};
