#include "workload/chakra_files.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "inflect/core/error.hpp"
#include "workload/importers.hpp"

namespace inflect::workload {
namespace chakra {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& message) { throw core::Error(core::ErrorKind::input, message); }

}  // namespace

std::optional<RankFile> rank_file(const fs::path& p) {
  // NAME.RANK.EXT with EXT et or json and RANK 1-9 digits (no std::regex: GCC 12's warns under
  // the sanitizers' build).
  const std::string name = p.filename().string();
  std::string ext;
  for (const char* e : {".et", ".json"})
    if (name.ends_with(e)) ext = e + 1;
  if (ext.empty()) return std::nullopt;
  const std::string stem = name.substr(0, name.size() - ext.size() - 1);
  const auto dot = stem.rfind('.');
  if (dot == std::string::npos) return std::nullopt;
  const std::string digits = stem.substr(dot + 1);
  if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return RankFile{p.string(), stem.substr(0, dot), ext, std::stoi(digits)};
}

std::vector<RankFile> list_rank_files(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    auto f = rank_file(path);
    return {f ? *f : RankFile{path, path, "", 0}};
  }
  std::vector<RankFile> files;
  for (const auto& entry : fs::directory_iterator(path, ec))
    if (entry.is_regular_file())
      if (auto f = rank_file(entry.path())) files.push_back(*f);
  if (ec) throw core::Error(core::ErrorKind::io, fmt::format("cannot list Chakra trace directory '{}': {}", path, ec.message()));
  if (files.empty())
    fail(fmt::format("{}: no Chakra trace files (NAME.RANK.et or NAME.RANK.json, one per rank) in the directory", path));
  std::set<std::string> kinds;
  for (const auto& f : files) kinds.insert(f.prefix + ".N." + f.ext);
  if (kinds.size() > 1)
    fail(fmt::format("{}: more than one trace in the directory ({}); keep one per directory", path,
                     fmt::join(kinds, ", ")));
  std::sort(files.begin(), files.end(), [](const RankFile& a, const RankFile& b) { return a.rank < b.rank; });
  for (std::size_t i = 1; i < files.size(); ++i)
    if (files[i].rank == files[i - 1].rank) fail(fmt::format("{}: two files for rank {}", path, files[i].rank));
  return files;
}

}  // namespace chakra

std::vector<std::string> chakra_files(const std::string& path) {
  std::vector<std::string> out;
  for (const auto& f : chakra::list_rank_files(path)) out.push_back(f.path);
  return out;
}

}  // namespace inflect::workload
