// Scan rows are their point's RunReport written through the report field table: the bundled
// scans' golden results.jsonl and results.csv read back into rows and write out the same bytes
// (what --resume and merge rely on), and a point that did not run has null figures.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "inflect/scan/results.hpp"

namespace {

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("scan results: golden rows read back and write out byte for byte") {
  for (const char* name : {"scans-gpt3-175b-h100-vs-h200", "scans-h200-microbatch-power", "scans-llama3-70b-h100-scaling"}) {
    CAPTURE(name);
    const std::string dir = std::string(INFLECT_SOURCE_DIR) + "/tests/golden/" + name;
    const auto meta = inflect::scan::read_meta(dir);
    const auto jsonl = lines_of(dir + "/results.jsonl"), csv = lines_of(dir + "/results.csv");
    REQUIRE(!jsonl.empty());
    REQUIRE(csv.size() == jsonl.size() + 1);
    CHECK(csv[0] == inflect::scan::csv_header(meta.axis_paths));
    for (std::size_t i = 0; i < jsonl.size(); ++i) {
      CAPTURE(i);
      const auto row = inflect::scan::row_from_jsonl(jsonl[i]);
      REQUIRE(row.has_value());
      CHECK(inflect::scan::row_to_jsonl(*row) == jsonl[i]);
      CHECK(inflect::scan::row_to_csv(*row) == csv[i + 1]);
      if (row->status == inflect::scan::RowStatus::ok) CHECK(row->report.step_time.value() > 0);
    }
  }
}

TEST_CASE("scan results: a point that did not run keeps its scale and nothing else") {
  inflect::scan::ScanRow row;
  row.status = inflect::scan::RowStatus::failed;
  row.reason = "the engine failed";
  row.report.devices = 16;
  row.report.nodes = 2;
  const std::string line = inflect::scan::row_to_jsonl(row);
  CHECK(line.find("\"devices\":16,\"nodes\":2,") != std::string::npos);
  CHECK(line.find("\"tokens_per_step\":null") != std::string::npos);
  CHECK(line.find("\"capacity_bytes\":null,\"fits\":null,\"report\":null") != std::string::npos);
  const auto back = inflect::scan::row_from_jsonl(line);
  REQUIRE(back.has_value());
  CHECK_FALSE(back->has_report);
  CHECK(back->report.devices == 16);
  CHECK(inflect::scan::row_to_jsonl(*back) == line);
}
