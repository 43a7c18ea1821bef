#pragma once
// `inflect calibrate` without the files: measured tables in, a profile out, with each table's
// error before and after. The CLI reads the files and writes the profile; tests call this.
#include <optional>
#include <string>
#include <vector>

#include "inflect/calib/collective_check.hpp"
#include "inflect/calib/nccl_tests.hpp"
#include "inflect/net/topology_spec.hpp"

namespace inflect::calib {

/// Mean absolute relative errors of a replayed table, rows >= 1 MiB and below.
struct TableErrors {
  double large = 0, small = 0;  // NaN when there is no such row
  int large_rows = 0, small_rows = 0;
};
TableErrors table_errors(const TableCheck& check);
/// An error as the reports print it: "12.3%", or "-" when there is none (NaN).
std::string percent(double fraction);

struct CalibratedTable {
  std::string file;
  TableGroup group;
  TableErrors before, after;
};

struct Calibration {
  net::CollectiveProfile profile;
  std::vector<CalibratedTable> tables;
};

/// Fits the collective model on `spec` to `tables`: per collective and fabric level, one fit below
/// 1 MiB and one from 1 MiB where each has at least 3 rows (else one over all), on the rows the
/// model would run as measured (rows measured with a named algorithm are replayed, not fitted).
/// `ranks` / `nodes` override what the tables say. Throws core::Error(input) when nothing can be
/// fitted.
Calibration calibrate(const std::vector<NcclTable>& tables, const net::TopologySpec& spec, const std::string& name,
                      std::optional<int> ranks = std::nullopt, std::optional<int> nodes = std::nullopt);

}  // namespace inflect::calib
