// golden_check: runs one golden case (tests/golden/<case>/case.yaml) through the `inflect` binary
// and compares what it writes with the case's golden files, byte for byte.
//
//   golden_check INFLECT ROOT CASE_DIR            compare (exit 1 on a difference, naming it)
//   golden_check INFLECT ROOT CASE_DIR --update   write the golden files from this run
//   golden_check --coverage ROOT                  every bundled experiment, scan, search and jobs file has a case
//
// case.yaml:
//   args: [run, workloads/examples/x.yaml, --fidelity, full, --json, --no-trace]   # from ROOT
//   stdout: report.json        # the golden file stdout is compared with (optional)
//   files: [results.jsonl]     # files the command writes under {out} (a fresh folder; optional)
//   labels: [slow]             # ctest labels (read by tests/CMakeLists.txt; optional)
//   exit: 3                    # the exit code the command must give (README.md "Exit codes"; default 0)
//
// What depends on the machine or the build is masked, in one rule: in a .json file (and in each
// line of a .jsonl file) every object's "timing" member (report.json's simulator.timing,
// search.json's timing) and every "inflect_version" string (report.json's
// provenance.inflect_version: the build's git describe) is replaced by kMasked. JSON is then
// written back as inflect writes it (2-space indent, keys in their order; rows compact), so the
// rest compares byte for byte. Everything else is compared as it is.
#include <yaml-cpp/yaml.h>

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

constexpr const char* kMasked = "masked: machine-dependent (tests/golden/README.md)";
/// Runs with more ops than this are labelled slow (the sanitizer build skips them): about one
/// second in a Release build, a minute under AddressSanitizer.
constexpr std::uint64_t kSlowOps = 3'000'000;

struct Case {
  std::vector<std::string> args;
  std::string stdout_file;
  std::vector<std::string> files;
  std::vector<std::string> labels;
  int exit_code = 0;
};

Case read_case(const fs::path& dir) {
  const YAML::Node y = YAML::LoadFile((dir / "case.yaml").string());
  Case c;
  for (const auto& a : y["args"]) c.args.push_back(a.as<std::string>());
  if (y["stdout"]) c.stdout_file = y["stdout"].as<std::string>();
  if (y["files"])
    for (const auto& f : y["files"]) c.files.push_back(f.as<std::string>());
  if (y["labels"])
    for (const auto& l : y["labels"]) c.labels.push_back(l.as<std::string>());
  if (y["exit"]) c.exit_code = y["exit"].as<int>();
  if (c.args.empty()) throw std::runtime_error((dir / "case.yaml").string() + ": no args");
  if (c.stdout_file.empty() && c.files.empty())
    throw std::runtime_error((dir / "case.yaml").string() + ": nothing to compare (stdout: or files:)");
  return c;
}

std::string shell_quoted(const std::string& s) {
  std::string q(1, '\'');
  for (char ch : s) {
    if (ch == '\'')
      q.append("'\\''");
    else
      q.push_back(ch);
  }
  q.push_back('\'');
  return q;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

void mask(Json& j) {
  if (j.is_object()) {
    for (auto& [key, value] : j.items()) {
      if ((key == "timing" && value.is_object()) || (key == "inflect_version" && value.is_string()))
        value = kMasked;
      else
        mask(value);
    }
  } else if (j.is_array()) {
    for (auto& v : j) mask(v);
  }
}

bool is_json(const std::string& name) { return name.size() > 5 && name.substr(name.size() - 5) == ".json"; }
bool is_jsonl(const std::string& name) { return name.size() > 6 && name.substr(name.size() - 6) == ".jsonl"; }

/// The comparable form of one output: JSON masked and rewritten as inflect writes it.
std::string normalized(const std::string& name, const std::string& text) {
  if (is_jsonl(name)) {
    // One JSON value per line, written compact as inflect writes rows.
    std::istringstream in(text);
    std::string out, line;
    while (std::getline(in, line)) {
      Json j = Json::parse(line);
      mask(j);
      out += j.dump() + "\n";
    }
    return out;
  }
  if (!is_json(name)) return text;
  Json j = Json::parse(text);
  mask(j);
  return j.dump(2) + "\n";
}

std::uint64_t ops_of(const std::string& name, const std::string& text) {
  if (!is_json(name)) return 0;
  const Json j = Json::parse(text);
  if (j.contains("simulator") && j["simulator"].contains("ops")) return j["simulator"]["ops"].get<std::uint64_t>();
  return 0;
}

/// Where two outputs differ, for the failure message: JSON paths (a JSON patch from the golden
/// to this run) or the first differing lines.
void explain(const std::string& name, const std::string& golden, const std::string& now) {
  if (is_json(name)) {
    const Json patch = Json::diff(Json::parse(golden), Json::parse(now));
    std::cerr << "  " << patch.size() << " JSON differences (golden -> this run):\n";
    for (std::size_t i = 0; i < std::min<std::size_t>(patch.size(), 25); ++i) std::cerr << "    " << patch[i].dump() << "\n";
    return;
  }
  std::istringstream a(golden), b(now);
  std::string la, lb;
  int line = 0, shown = 0;
  while (shown < 10) {
    const bool ga = static_cast<bool>(std::getline(a, la)), gb = static_cast<bool>(std::getline(b, lb));
    if (!ga && !gb) break;
    ++line;
    if (ga && gb && la == lb) continue;
    std::cerr << "  line " << line << ":\n    golden: " << (ga ? la : "<end>") << "\n    now:    " << (gb ? lb : "<end>") << "\n";
    ++shown;
  }
}

/// Rewrites case.yaml's labels line: `labels: [slow]` or none.
void relabel(const fs::path& case_yaml, bool slow) {
  std::istringstream in(read_file(case_yaml));
  std::string text, line;
  while (std::getline(in, line))
    if (line.rfind("labels:", 0) != 0) text += line + "\n";
  if (slow) text += "labels: [slow]\n";
  write_file(case_yaml, text);
  std::cout << case_yaml.string() << (slow ? ": labelled slow\n" : ": no longer slow\n");
}

int run_case(const std::string& inflect, const fs::path& root, const fs::path& dir, bool update) {
  const Case c = read_case(dir);
  std::mt19937_64 rng(std::random_device{}());
  const fs::path out = fs::temp_directory_path() / ("inflect-golden-" + dir.filename().string() + "-" + std::to_string(rng()));
  fs::create_directories(out);

  std::string cmd = "cd " + shell_quoted(root.string()) + " && " + shell_quoted(inflect);
  for (std::string a : c.args) {
    if (a == "{out}") a = out.string();
    cmd.push_back(' ');
    cmd.append(shell_quoted(a));
  }
  // Progress lines go to stderr; they are shown only when the command fails.
  const fs::path errors = out / "stderr.txt";
  cmd.append(" 2>");
  cmd.append(shell_quoted(errors.string()));
  std::string captured;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot run " + cmd);
  std::array<char, 1 << 16> buf{};
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0;) captured.append(buf.data(), n);
  const int status = pclose(pipe);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != c.exit_code) {
    std::cerr << dir.filename().string() << ": `" << cmd << "` failed (status " << status << ", expected exit "
              << c.exit_code << ")\n"
              << read_file(errors);
    fs::remove_all(out);
    return 1;
  }

  std::vector<std::pair<std::string, std::string>> outputs;  // golden file name, this run's text
  if (!c.stdout_file.empty()) outputs.emplace_back(c.stdout_file, captured);
  for (const auto& f : c.files) outputs.emplace_back(f, read_file(out / f));
  fs::remove_all(out);

  int failures = 0;
  std::uint64_t ops = 0;
  for (const auto& [name, text] : outputs) {
    const std::string now = normalized(name, text);
    ops = std::max(ops, ops_of(name, text));
    const fs::path golden_path = dir / name;
    if (update) {
      write_file(golden_path, now);
      continue;
    }
    if (!fs::exists(golden_path)) {
      std::cerr << golden_path.string() << ": no golden file (scripts/update-goldens writes it)\n";
      ++failures;
      continue;
    }
    const std::string golden = read_file(golden_path);
    if (golden == now) continue;
    std::cerr << golden_path.string() << " differs from this run of `inflect";
    for (const auto& a : c.args) std::cerr << " " << a;
    std::cerr << "`\n";
    explain(name, golden, now);
    ++failures;
  }
  if (update) {
    // The slow label follows the case's size (ops, deterministic), not this machine's speed.
    const bool slow = ops > kSlowOps;
    const bool labelled = std::find(c.labels.begin(), c.labels.end(), "slow") != c.labels.end();
    if (slow != labelled) relabel(dir / "case.yaml", slow);
    std::cout << "updated " << dir.string() << "\n";
  }
  if (failures)
    std::cerr << "if the change is intended: scripts/update-goldens " << dir.filename().string()
              << ", and say why in the commit that changes the code\n";
  return failures ? 1 : 0;
}

/// A device or topology file an example reads (workloads/examples/custom-device/devices/x.yaml):
/// an input of an experiment beside it, not an experiment (scripts/update-goldens skips the same).
bool is_example_input(const fs::path& rel) {
  for (const auto& part : rel.parent_path())
    if (part == "devices" || part == "topologies") return true;
  return false;
}

/// Every bundled experiment, scan, search and jobs file must be some case's input, so a new example cannot
/// go without a golden report.
int check_coverage(const fs::path& root) {
  std::set<std::string> named;
  for (const auto& e : fs::directory_iterator(root / "tests/golden")) {
    if (!fs::exists(e.path() / "case.yaml")) continue;
    for (const auto& a : read_case(e.path()).args) named.insert(a);
  }
  int missing = 0;
  for (const char* dir : {"workloads/examples", "workloads/validation", "workloads/scans", "workloads/search", "workloads/traces",
                          "workloads/jobs"}) {
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      if (e.path().extension() != ".yaml" || is_example_input(fs::relative(e.path(), root / dir))) continue;
      const std::string rel = fs::relative(e.path(), root).string();
      if (named.count(rel)) continue;
      std::cerr << rel << " has no golden case (scripts/update-goldens creates one)\n";
      ++missing;
    }
  }
  return missing ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::vector<std::string> a(argv + 1, argv + argc);
    if (a.size() == 2 && a[0] == "--coverage") return check_coverage(a[1]);
    if (a.size() == 3 || (a.size() == 4 && a[3] == "--update")) return run_case(a[0], a[1], a[2], a.size() == 4);
    std::cerr << "usage: golden_check INFLECT ROOT CASE_DIR [--update] | golden_check --coverage ROOT\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "golden_check: " << e.what() << "\n";
    return 2;
  }
}
