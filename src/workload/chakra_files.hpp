#pragma once
// A Chakra trace's files (private to the workload layer): one per rank, NAME.RANK.et or
// NAME.RANK.json as Chakra's tools name them, one trace per directory.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace inflect::workload::chakra {

struct RankFile {
  std::string path, prefix, ext;
  int rank = 0;
};

/// NAME.RANK.EXT's parts, or nullopt for another name.
std::optional<RankFile> rank_file(const std::filesystem::path& p);
/// A directory's rank files in rank order (errors: none, two traces, two files for a rank), or
/// the one file given.
std::vector<RankFile> list_rank_files(const std::string& path);

}  // namespace inflect::workload::chakra
