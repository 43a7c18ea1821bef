#pragma once
// The execution graph's handles, in a header of their own so that rank_classes.hpp (which
// exec_graph.hpp includes for end_rank's comparer) can name them without the graph.
#include <cstdint>

namespace inflect::workload {

using RankId = std::int32_t;
using OpId = std::uint32_t;
using GroupId = std::uint32_t;

}  // namespace inflect::workload
