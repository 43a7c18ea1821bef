#include "inflect/core/time.hpp"

#include <fmt/format.h>

#include "inflect/core/error.hpp"

namespace inflect::core {

// Out of line: the hot path (every event's time) keeps only the overflow test inline.
void Time::overflow(rep a, rep b, bool subtract) {
  throw Error(ErrorKind::input,
              fmt::format("simulated time overflow: {:.6g} s {} {:.6g} s is past the {:.0f} days that int64 "
                          "picoseconds can represent; an input is far beyond what hardware and models have",
                          static_cast<double>(a) * 1e-12, subtract ? '-' : '+', static_cast<double>(b) * 1e-12,
                          static_cast<double>(std::numeric_limits<rep>::max()) * 1e-12 / 86400));
}

}  // namespace inflect::core
