#pragma once
// Private to calib: the three readers behind parse_nccl_tests (text, JSON, Markdown) and what each
// hands back. A reader reads its form's rows and collects what the file says around them;
// parse_nccl_tests then decides each row's collective and the rank count the same way for all forms
// (nccl_tests.cpp), so the rules are written once.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "calib/table_text.hpp"
#include "inflect/calib/nccl_tests.hpp"

namespace inflect::calib::detail {

struct NcclRead {
  std::string format;
  std::vector<NcclRow> rows;
  std::vector<bool> own_kind;             // per row: its kind was read from the row itself
  std::vector<std::string> header_texts;  // where binaries and `GPU count: N` are looked for
  std::optional<int> ranks;               // what the reader counted itself (JSON devices, device lines)
  int last_line = 0;                      // the file's last line, for "no rows" errors
};

NcclRead read_nccl_text(const std::vector<Line>& lines, std::string_view file);
NcclRead read_nccl_json(std::string_view text, std::string_view file);
NcclRead read_nccl_markdown(const std::vector<Line>& lines, std::string_view file);

}  // namespace inflect::calib::detail
