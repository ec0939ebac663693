// MaxTree: a fixed-size array of small integers with O(log n) point updates
// and "first position >= from whose value >= k" queries. The ledger keeps one
// per pool of nodes and capacity kind (free GPUs, largest free MIG instance,
// free vCPUs), so the scheduler finds the next node with room in fleet order
// without scanning. Not thread-safe; owned by the ledger.
#pragma once

#include <cstdint>
#include <vector>

namespace meridian {

class MaxTree {
 public:
  MaxTree() = default;
  explicit MaxTree(size_t n) { Reset(n); }

  void Reset(size_t n) {
    size_ = n;
    leaves_ = 1;
    while (leaves_ < n) leaves_ *= 2;
    tree_.assign(2 * leaves_, 0);
  }
  size_t size() const { return size_; }
  int32_t Get(size_t pos) const { return tree_[leaves_ + pos]; }
  int32_t Max() const { return tree_.empty() ? 0 : tree_[1]; }

  void Set(size_t pos, int32_t value) {
    size_t i = leaves_ + pos;
    tree_[i] = value;
    for (i /= 2; i >= 1; i /= 2) {
      int32_t m = tree_[2 * i] > tree_[2 * i + 1] ? tree_[2 * i] : tree_[2 * i + 1];
      if (tree_[i] == m) break;  // ancestors unchanged
      tree_[i] = m;
    }
  }

  // The smallest position p >= from with Get(p) >= k, or -1.
  int64_t FirstAtLeast(size_t from, int32_t k) const {
    if (from >= size_ || tree_[1] < k) return -1;
    // Walk up from the leaf until a right sibling subtree holds a value >= k,
    // then down to its leftmost such leaf.
    size_t i = leaves_ + from;
    if (tree_[i] >= k) return static_cast<int64_t>(from);
    while (i > 1) {
      if ((i & 1) == 0 && tree_[i + 1] >= k) {
        i = i + 1;
        while (i < leaves_) i = tree_[2 * i] >= k ? 2 * i : 2 * i + 1;
        size_t pos = i - leaves_;
        return pos < size_ ? static_cast<int64_t>(pos) : -1;
      }
      i /= 2;
    }
    return -1;
  }

 private:
  size_t size_ = 0;
  size_t leaves_ = 1;
  std::vector<int32_t> tree_;
};

}  // namespace meridian
