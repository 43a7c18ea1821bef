#pragma once
// Tables whose entries are recycled through a free list (the engine's collective instances and
// active phases, the event queue's buckets): entries keep their allocations between uses.
#include <cstdint>
#include <vector>

namespace inflect::core {

/// Index of an entry of `table` to reuse: the last one freed, else a new default-constructed one
/// appended. The caller resets what it needs and pushes the index back on `free` when done.
template <class Table>
std::uint32_t take_slot(std::vector<std::uint32_t>& free, Table& table) {
  if (!free.empty()) {
    const std::uint32_t i = free.back();
    free.pop_back();
    return i;
  }
  table.emplace_back();
  return static_cast<std::uint32_t>(table.size() - 1);
}

}  // namespace inflect::core
