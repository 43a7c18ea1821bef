#include "inflect/study/study_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "inflect/core/error.hpp"
#include "inflect/io/yaml_reader.hpp"

namespace inflect::study {

namespace {

namespace fs = std::filesystem;

void check_name(const io::Node& at, const std::string& name) {
  if (!is_case_name(name))
    at.fail(fmt::format("case name '{}' must be a folder name: letters, digits, '-', '_' and '.'", name));
}

std::string resolve(const io::Node& at, const std::string& dir, const std::string& p, bool want_dir) {
  const fs::path full = fs::path(p).is_absolute() ? fs::path(p) : fs::path(dir) / p;
  std::error_code ec;
  const bool ok = want_dir ? fs::is_directory(full, ec) : fs::is_regular_file(full, ec);
  if (!ok)
    throw core::Error(core::ErrorKind::io, fmt::format("{} '{}' not found (looked for {})", want_dir ? "folder" : "file", p,
                                                       full.lexically_normal().string()),
                      at.where());
  return full.lexically_normal().string();
}

std::string stem(const std::string& path) { return fs::path(path).stem().string(); }

}  // namespace

bool is_case_name(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && std::all_of(name.begin(), name.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
         });
}

std::string_view case_kind_name(CaseKind k) { return k == CaseKind::scan ? "scan" : "experiment"; }

StudySpec load_study(const std::string& path) { return parse_study(io::load_yaml_file(path, "study"), path); }

StudySpec parse_study(const io::Node& root, const std::string& path) {
  StudySpec s;
  s.file = path;
  const std::string dir = fs::path(path).parent_path().empty() ? "." : fs::path(path).parent_path().string();
  io::MapReader m(root);
  s.name = m.required("study").as_string();
  {
    const io::Node b = m.required("baselines");
    const fs::path p = fs::path(b.as_string()).is_absolute() ? fs::path(b.as_string()) : fs::path(dir) / b.as_string();
    s.baselines = p.lexically_normal().string();
  }
  plan::Fidelity fidelity = plan::Fidelity::symmetric;
  if (auto f = m.optional("fidelity")) fidelity = plan::parse_fidelity(f->as_choice({"symmetric", "full"}));
  if (auto f = m.optional("fail_on")) s.thresholds = read_thresholds(*f);
  const io::Node cases = m.required("cases");
  m.finish();
  if (!cases.is_sequence() || cases.items().empty()) cases.fail("cases is a list of experiment:, experiments: or scan: entries");

  std::map<std::string, std::string> seen;  // name -> file
  auto add = [&](const io::Node& at, StudyCase c) {
    check_name(at, c.name);
    if (auto [it, fresh] = seen.emplace(c.name, c.file); !fresh)
      at.fail(fmt::format("two cases are named '{}' ({} and {}); give one a name:", c.name, it->second, c.file));
    s.cases.push_back(std::move(c));
  };
  for (const auto& item : cases.items()) {
    io::MapReader c(item);
    const int kinds = (c.has("experiment") ? 1 : 0) + (c.has("experiments") ? 1 : 0) + (c.has("scan") ? 1 : 0);
    if (kinds != 1) item.fail("a case has exactly one of experiment: FILE, experiments: FOLDER or scan: FILE");
    StudyCase base;
    base.fidelity = fidelity;
    if (auto f = c.optional("fidelity")) base.fidelity = plan::parse_fidelity(f->as_choice({"symmetric", "full"}));
    if (auto f = c.optional("ignore_memory")) base.ignore_memory = f->as_bool();
    std::optional<io::Node> name = c.optional("name");
    if (auto e = c.optional("experiment")) {
      base.file = resolve(*e, dir, e->as_string(), false);
      base.name = name ? name->as_string() : stem(base.file);
      add(name ? *name : *e, base);
    } else if (auto sc = c.optional("scan")) {
      if (c.has("ignore_memory")) item.fail("ignore_memory: is for experiments; a scan reports a point that does not fit as such");
      base.kind = CaseKind::scan;
      base.file = resolve(*sc, dir, sc->as_string(), false);
      base.name = name ? name->as_string() : stem(base.file);
      add(name ? *name : *sc, base);
    } else {
      const io::Node folder = c.required("experiments");
      if (name) name->fail("an experiments: folder gives one case per file, each named by its file (prefix: goes before it); "
                           "name: is for one case");
      const std::string prefix = c.optional("prefix") ? c.required("prefix").as_string() : "";
      const std::string d = resolve(folder, dir, folder.as_string(), true);
      std::vector<std::string> files;
      for (const auto& entry : fs::directory_iterator(d))
        if (entry.is_regular_file() && entry.path().extension() == ".yaml") files.push_back(entry.path().string());
      std::sort(files.begin(), files.end());
      if (files.empty()) folder.fail(fmt::format("folder {} has no .yaml experiments", d));
      for (const auto& f : files) {
        StudyCase one = base;
        one.file = fs::path(f).lexically_normal().string();
        one.name = prefix + stem(f);
        add(folder, one);
      }
    }
    c.finish();
  }
  return s;
}

}  // namespace inflect::study
