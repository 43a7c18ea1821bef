#pragma once
// Collective benchmarks as nccl-tests and rccl-tests write them, and as people publish them.
//
// parse_nccl_tests reads four forms (docs/calibration.md, "File formats", has an example of each):
//   - nccl-tests / rccl-tests text output: the table under the `size count type redop root` header
//     (with or without its leading '#'), out-of-place and in-place `time algbw busbw #wrong`
//     groups, optional per-iteration columns (i_min i_max i_p99 i_cv%) and a trailing timestamp;
//     comments, banners, footers and other noise are skipped, but a line that starts like a row (an
//     integer size) and cannot be read is an error at its line;
//   - nccl-tests JSON (`-J file.json`, JSON_FILE_VERSION 3): results[], devices[], config, args;
//   - Markdown tables of busbw by message size (`| 1K | 0.04 |`), the size labels read as nccl-tests
//     sizes (powers of two written in truncated decimal units, snapped back: `132K` is 131072);
//   - Markdown summary tables (`| collective | algo | busbw |`) whose one message size is in the
//     nccl-tests command of the header comment (`-b 16G -e 16G`).
// The collective and the rank count are read from the file where it says them (rules below); what
// a file does not say is left for the caller (an explicit kind, `--ranks`).
//
// Figures are in unit types: nccl-tests' time (us) becomes Seconds, its algbw and busbw (GB/s,
// 1e9 bytes per second: algbw = size / 1e9 / seconds) Bandwidth in bytes per second.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inflect/core/units.hpp"

namespace inflect::calib {

/// The collectives nccl-tests measures that inflect models (its `*_perf` binaries of those names).
enum class NcclCollective : unsigned char {
  all_reduce,
  all_gather,
  reduce_scatter,
  all_to_all,
  send_recv,
  broadcast,
  reduce
};

/// "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv", "broadcast", "reduce".
std::string_view to_string(NcclCollective kind);
/// Reads a collective's name in any of the spellings files use, case and separators ignored:
/// "all_reduce", "all-reduce", "AllReduce", "allreduce", "all_reduce_perf", "alltoall", "sendrecv",
/// "reduce-scatter", ...; nullopt for anything else.
std::optional<NcclCollective> parse_nccl_collective(std::string_view name);
inline constexpr std::string_view kNcclCollectiveNames =
    "all_reduce, all_gather, reduce_scatter, all_to_all, send_recv, broadcast, reduce";

/// One measurement of a row (out-of-place or in-place). Each figure is there only if the file has
/// it: busbw-only tables have no time and no algbw.
struct NcclMeasure {
  std::optional<core::Seconds> time;     // nccl-tests' time column, us in the file
  std::optional<core::Bandwidth> algbw;  // size / time
  std::optional<core::Bandwidth> busbw;  // algbw x nccl_busbw_factor
  bool empty() const { return !time && !algbw && !busbw; }
};

/// One row: one message size of one collective.
struct NcclRow {
  int line = 0;  // 1-based line of the file (0 for JSON, where lines say nothing: see the key path)
  NcclCollective kind = NcclCollective::all_reduce;
  core::Bytes size;             // nccl-tests' size column: the buffer (all-gather: the gathered one)
  std::optional<double> count;  // elements
  std::string type;             // element type as written ("float", "bfloat16"); empty if not given
  std::string redop;            // "sum", "none", ...; empty if not given
  std::optional<int> root;      // -1 when the collective has none
  NcclMeasure out_of_place;
  NcclMeasure in_place;
  std::string algorithm;  // the algorithm the row was measured with, lower-case ("nvls", "ring"), if given
  std::string note;       // what else the row says about how it was run (`NCCL_NVLS_ENABLE=1`), or
                          // the column a busbw-only table's value came from
  /// The measure to use: out-of-place if it has a time, else in-place if it has one, else
  /// whichever has a busbw (busbw-only tables).
  const NcclMeasure& best() const;
};

/// Names of NcclTable::format.
inline constexpr std::string_view kNcclText = "nccl-tests text";
inline constexpr std::string_view kNcclJson = "nccl-tests json";
inline constexpr std::string_view kNcclMarkdownBusbw = "markdown busbw";
inline constexpr std::string_view kNcclMarkdownSummary = "markdown summary";

struct NcclTable {
  std::string file;
  std::string source_comment;  // the first line when it is a '#' comment, without the '#'
  std::string format;          // one of kNcclText, kNcclJson, kNcclMarkdownBusbw, kNcclMarkdownSummary
  std::optional<int> ranks;    // the number of ranks that ran it, when the file says or shows it
  std::vector<NcclRow> rows;   // in file order; never empty
};

/// Parses one nccl-tests / rccl-tests result file (any of the four forms above). `file_name` names
/// the file in errors and is one of the places the collective is read from.
///
/// The collective of a row, first found of: the row's own collective column (summary tables); the
/// explicit `kind`; the binary named in the JSON's args or in a header comment (`all_reduce_perf`,
/// `all_gather_perf`, `reduce_scatter_perf`, `alltoall_perf`, `sendrecv_perf`, `broadcast_perf`,
/// `reduce_perf`; one of them, not several); a collective named in the file name (`allreduce`,
/// `all_reduce`, `allgather`, `reducescatter`, `alltoall`, `sendrecv`, ...; one). Else an error
/// that says how to name it.
///
/// The rank count, first found of: JSON devices[] (one entry per process) x config.nthreads x
/// config.ngpus; the distinct ranks of nccl-tests' `#  Rank  N Group ...` device lines; a
/// `GPU count: N` in a header comment; the busbw/algbw ratio of the largest row with both, solved
/// for n (all-reduce 2(n-1)/n, all-gather, reduce-scatter, all-to-all (n-1)/n) when n is within 2%
/// of an integer >= 2. Else empty.
///
/// Throws core::Error(input) at file:line for anything it cannot read (JSON: at the key path).
NcclTable parse_nccl_tests(std::string_view text, std::string_view file_name,
                           std::optional<NcclCollective> kind = std::nullopt);

/// nccl-tests' bus-bandwidth factor, busbw = algbw x factor (nccl-tests src/*.cu): all_reduce
/// 2(n-1)/n; all_gather, reduce_scatter, all_to_all (n-1)/n; broadcast, reduce, send_recv 1.
/// `ranks` >= 1. Agrees with net::busbw_factor on the collectives both know (a test holds it).
double nccl_busbw_factor(NcclCollective kind, int ranks);

/// The time a busbw stands for: size / (busbw / factor). `ranks` >= 1, busbw > 0.
core::Seconds nccl_time_from_busbw(NcclCollective kind, int ranks, core::Bytes size, core::Bandwidth busbw);

/// A row's time: its best measure's time, else the time its busbw stands for when the factor is
/// known (`ranks` given, or a kind whose factor is 1) and the busbw is positive; else nullopt.
std::optional<core::Seconds> nccl_row_time(const NcclRow& row, std::optional<int> ranks);

}  // namespace inflect::calib
