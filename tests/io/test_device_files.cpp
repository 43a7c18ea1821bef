// Devices from the user's own files (docs/devices.md, "Your own devices"): `cluster.device_file` in
// an experiment and io::DeviceCatalog (`--catalog DIR`). Both read a file with parse_device, so a
// device of one's own is checked exactly as a bundled one; the tests here are about where the
// device comes from, which name wins, and the errors when two files claim one name.
#include <doctest/doctest.h>

#include "temp_dir.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "inflect/core/error.hpp"
#include "inflect/io/device_catalog.hpp"
#include "inflect/io/experiment_loader.hpp"

namespace {

namespace fs = std::filesystem;
using inflect::core::Error;
using inflect::core::ErrorKind;
using inflect::io::DeviceCatalog;

constexpr double kExact = 1e-12;

using inflect::test::TempDir;

std::string read(const fs::path& p) { return inflect::test::read_file(p); }

void write(const fs::path& p, const std::string& text) { inflect::test::write_file(p, text); }

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, "'", from, "' not in the text");
  return s.replace(at, from.size(), to);
}

/// The bundled H100 file renamed to `name` (its file must then be `name`.yaml) with `hbm` of HBM.
std::string h100_as(const std::string& name, const std::string& hbm = "80GB") {
  const std::string h100 = read(fs::path(INFLECT_SOURCE_DIR) / "calibration/devices/h100-sxm.yaml");
  return replaced(replaced(h100, "name: h100-sxm\n", "name: " + name + "\n"), "hbm_capacity: 81559MiB\n",
                  "hbm_capacity: " + hbm + "\n");
}

/// A small experiment on one DGX H100 (the topology names h100-sxm) with `cluster_extra` lines
/// added under `cluster:`.
std::string experiment(const std::string& cluster_extra, const std::string& topology = "topologies/dgx-h100.yaml") {
  return "name: custom\ncluster:\n  topology: " + topology + "\n  nodes: 1\n" + cluster_extra +
         "model:\n  preset: llama3-8b\ntraining:\n  seq_len: 4096\n  global_batch: 16\nparallel:\n  tp: 8\n";
}

inflect::plan::Experiment load(const fs::path& file, const DeviceCatalog& catalog = {}) {
  inflect::io::set_project_root(INFLECT_SOURCE_DIR);
  return inflect::io::load_experiment(file.string(), catalog);
}

/// The error loading `file` throws (REQUIREs one).
Error load_error(const fs::path& file, const DeviceCatalog& catalog = {}) {
  try {
    (void)load(file, catalog);
  } catch (const Error& e) {
    return e;
  }
  FAIL("loaded without error: ", file.string());
  return Error(ErrorKind::internal, "unreachable");
}

Error add_dir_error(DeviceCatalog& catalog, const fs::path& dir) {
  try {
    catalog.add_dir(dir.string());
  } catch (const Error& e) {
    return e;
  }
  FAIL("added without error: ", dir.string());
  return Error(ErrorKind::internal, "unreachable");
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

/// The 1-based line of `file` that starts with `prefix` (REQUIREs one).
int line_of(const fs::path& file, const std::string& prefix) {
  std::ifstream in(file);
  std::string l;
  for (int n = 1; std::getline(in, l); ++n)
    if (l.rfind(prefix, 0) == 0) return n;
  FAIL("no line starts with '", prefix, "' in ", file.string());
  return 0;
}

}  // namespace

TEST_CASE("device_file: the experiment's device is the file's, with the file's figures") {
  TempDir t("figures");
  write(t.path / "devices/big-h100.yaml", h100_as("big-h100", "123GB"));
  // Relative to the experiment's folder, not the current directory (the tests run from the root).
  write(t.path / "exp.yaml", experiment("  device_file: devices/big-h100.yaml\n"));
  const auto e = load(t.path / "exp.yaml");
  CHECK(e.cluster.device.name == "big-h100");
  CHECK(e.cluster.device.hbm_capacity.value() == doctest::Approx(123e9).epsilon(kExact));
  CHECK(fs::equivalent(e.cluster.device.file, t.path / "devices/big-h100.yaml"));
  // Everything else is the H100's: the same parser derived the same curves.
  const auto& h100 = inflect::io::find_device("h100-sxm");
  CHECK(e.cluster.device.hbm_bandwidth.value() == h100.hbm_bandwidth.value());
  CHECK(e.cluster.device.gemm_efficiency.points.size() == h100.gemm_efficiency.points.size());
  // The device file's device replaces the topology's (h100-sxm), as cluster.device does.
  CHECK(e.cluster.topology.device == "h100-sxm");
}

TEST_CASE("device_file: the bundled example's topology names the device only its device_file provides") {
  const fs::path dir = fs::path(INFLECT_SOURCE_DIR) / "workloads/examples/custom-device";
  const auto e = load(dir / "llama3-8b-dp8-example-192g.yaml");
  CHECK(e.cluster.topology.device == "example-h100-192g");
  CHECK(e.cluster.device.name == "example-h100-192g");
  CHECK(e.cluster.device.hbm_capacity.value() == doctest::Approx(192e9).epsilon(kExact));
  CHECK(e.cluster.device.hbm_bandwidth.value() == doctest::Approx(6e12).epsilon(kExact));
  // Its streaming measurements were taken on the H100 (measured_on), so the fraction of the
  // bandwidth they reached carries over, not their rate: the same efficiency curve as the H100's.
  const auto& h100 = inflect::io::find_device("h100-sxm");
  REQUIRE(e.cluster.device.memory_efficiency.points.size() == h100.memory_efficiency.points.size());
  for (std::size_t i = 0; i < h100.memory_efficiency.points.size(); ++i)
    CHECK(e.cluster.device.memory_efficiency.points[i].efficiency ==
          doctest::Approx(h100.memory_efficiency.points[i].efficiency).epsilon(kExact));
  // Without device_file the same topology names a device that is in no catalog.
  TempDir t("example-without");
  write(t.path / "exp.yaml", experiment("", (dir / "topologies/example-dgx-192g.yaml").string()));
  const Error err = load_error(t.path / "exp.yaml");
  CHECK(contains(err.message(), "unknown device 'example-h100-192g'"));
  // With the example's devices/ folder as a catalog, it is found by name.
  DeviceCatalog catalog;
  catalog.add_dir((dir / "devices").string());
  CHECK(load(t.path / "exp.yaml", catalog).cluster.device.name == "example-h100-192g");
}

TEST_CASE("device_file: a bad device file gives the parser's error at its file and line") {
  TempDir t("bad");
  write(t.path / "typo.yaml", replaced(h100_as("typo"), "hbm_bandwidth: 3350GB/s\n", "hbm_bandwith: 3350GB/s\n"));
  const int line = line_of(t.path / "typo.yaml", "hbm_bandwith:");
  write(t.path / "exp.yaml", experiment("  device_file: typo.yaml\n"));
  const Error e = load_error(t.path / "exp.yaml");
  CHECK(e.kind() == ErrorKind::input);
  CHECK(fs::equivalent(e.where().file, t.path / "typo.yaml"));
  CHECK(e.where().line == line);
  CHECK(contains(e.message(), "unknown key 'hbm_bandwith' (did you mean 'hbm_bandwidth'?)"));
  // A missing figure's source is the catalog's error too.
  write(t.path / "nosource.yaml", replaced(h100_as("nosource"), "  hbm_capacity: \"", "  hbm_capacity_: \""));
  write(t.path / "exp2.yaml", experiment("  device_file: nosource.yaml\n"));
  const Error s = load_error(t.path / "exp2.yaml");
  CHECK(fs::equivalent(s.where().file, t.path / "nosource.yaml"));
  CHECK(s.where().line > 0);
}

TEST_CASE("device_file: a missing file is an io error at the key, listing where it looked") {
  TempDir t("missing");
  write(t.path / "exp.yaml", experiment("  device_file: nowhere.yaml\n"));
  const Error e = load_error(t.path / "exp.yaml");
  CHECK(e.kind() == ErrorKind::io);
  CHECK(e.where().file == (t.path / "exp.yaml").string());
  CHECK(e.where().line == 5);
  CHECK(e.where().key_path == "cluster.device_file");
  CHECK(contains(e.message(), "device file 'nowhere.yaml' not found; looked in: "));
}

TEST_CASE("device_file: cluster.device must name the file's device") {
  TempDir t("agree");
  write(t.path / "mine.yaml", h100_as("mine"));
  // The same name in both: fine.
  write(t.path / "same.yaml", experiment("  device: mine\n  device_file: mine.yaml\n"));
  CHECK(load(t.path / "same.yaml").cluster.device.name == "mine");
  // Different names: an error at cluster.device naming both.
  write(t.path / "differ.yaml", experiment("  device: h100-sxm\n  device_file: mine.yaml\n"));
  const Error e = load_error(t.path / "differ.yaml");
  CHECK(e.kind() == ErrorKind::input);
  CHECK(e.where().file == (t.path / "differ.yaml").string());
  CHECK(e.where().line == 5);
  CHECK(e.where().key_path == "cluster.device");
  CHECK(contains(e.message(), "'h100-sxm' is not the device of cluster.device_file"));
  CHECK(contains(e.message(), "'mine'"));
}

TEST_CASE("device_file: a file that takes a catalog device's name is an error naming both files") {
  TempDir t("taken");
  write(t.path / "h100-sxm.yaml", h100_as("h100-sxm", "96GB"));
  write(t.path / "exp.yaml", experiment("  device_file: h100-sxm.yaml\n"));
  const Error e = load_error(t.path / "exp.yaml");
  CHECK(e.kind() == ErrorKind::input);
  CHECK(fs::equivalent(e.where().file, t.path / "h100-sxm.yaml"));
  CHECK(contains(e.message(), "already in the catalog (calibration/devices/h100-sxm.yaml); rename it"));
  // The file a --catalog folder already added is the same device, not a second one.
  TempDir c("taken-catalog");
  write(c.path / "mine.yaml", h100_as("mine"));
  DeviceCatalog catalog;
  catalog.add_dir(c.path.string());
  write(t.path / "exp2.yaml", experiment("  device_file: " + (c.path / "mine.yaml").string() + "\n"));
  CHECK(load(t.path / "exp2.yaml", catalog).cluster.device.name == "mine");
  // Another file of that name is not.
  write(t.path / "mine.yaml", h100_as("mine", "90GB"));
  write(t.path / "exp3.yaml", experiment("  device_file: mine.yaml\n"));
  const Error other = load_error(t.path / "exp3.yaml", catalog);
  CHECK(contains(other.message(), "already in the catalog (" + (c.path / "mine.yaml").string() + ")"));
}

TEST_CASE("catalog: --catalog folders add their devices, and the embedded catalog stays as it was") {
  TempDir t("add");
  write(t.path / "b-dev.yaml", h100_as("b-dev", "100GB"));
  write(t.path / "a-dev.yaml", h100_as("a-dev", "90GB"));
  write(t.path / "notes.txt", "not a device: only *.yaml files are read\n");
  DeviceCatalog catalog;
  catalog.add_dir(t.path.string());
  const DeviceCatalog plain;  // a separate value: nothing process-wide changed
  CHECK(plain.lookup("a-dev") == nullptr);
  CHECK_THROWS_AS((void)inflect::io::find_device("a-dev"), Error);
  REQUIRE(catalog.lookup("a-dev") != nullptr);
  CHECK(catalog.find("b-dev").hbm_capacity.value() == doctest::Approx(100e9).epsilon(kExact));
  CHECK(&catalog.find("h100-sxm") == &inflect::io::find_device("h100-sxm"));
  // Added in file order; listed with the embedded ones, by name.
  const auto added = catalog.added();
  REQUIRE(added.size() == 2);
  CHECK(added[0].name == "a-dev");
  CHECK(added[1].name == "b-dev");
  const auto all = catalog.all();
  CHECK(all.size() == inflect::io::device_catalog().size() + 2);
  for (std::size_t i = 1; i < all.size(); ++i) CHECK(all[i - 1].name < all[i].name);
  // A copy is independent of later additions.
  const DeviceCatalog before = catalog;
  TempDir u("add-more");
  write(u.path / "c-dev.yaml", h100_as("c-dev"));
  catalog.add_dir(u.path.string());
  CHECK(catalog.lookup("c-dev") != nullptr);
  CHECK(before.lookup("c-dev") == nullptr);
  // The same folder twice adds the same files, not second devices.
  catalog.add_dir(t.path.string());
  CHECK(catalog.added().size() == 3);
  // An unknown name lists the added devices among those known.
  try {
    (void)catalog.find("a-de");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(contains(e.message(), "(did you mean 'a-dev'?)"));
    CHECK(contains(e.message(), "c-dev"));
  }
}

TEST_CASE("catalog: a --catalog device that takes a name already there is an error naming both files") {
  TempDir t("dup");
  write(t.path / "h100-sxm.yaml", h100_as("h100-sxm"));
  DeviceCatalog catalog;
  const Error e = add_dir_error(catalog, t.path);
  CHECK(e.kind() == ErrorKind::input);
  CHECK(e.where().file == (t.path / "h100-sxm.yaml").string());
  CHECK(e.where().line > 0);
  CHECK(e.message() == "device 'h100-sxm' in " + (t.path / "h100-sxm.yaml").string() +
                           " is already in the catalog (calibration/devices/h100-sxm.yaml); rename it");
  // Two folders with a file of the same name: the second is the error, naming the first.
  TempDir a("dup-a"), b("dup-b");
  write(a.path / "twin.yaml", h100_as("twin"));
  write(b.path / "ok.yaml", h100_as("ok"));
  write(b.path / "twin.yaml", h100_as("twin", "96GB"));
  catalog.add_dir(a.path.string());
  const Error twin = add_dir_error(catalog, b.path);
  CHECK(twin.message() == "device 'twin' in " + (b.path / "twin.yaml").string() + " is already in the catalog (" +
                              (a.path / "twin.yaml").string() + "); rename it");
  // A folder that fails adds nothing, not even its good files.
  CHECK(catalog.lookup("ok") == nullptr);
}

TEST_CASE("catalog: a --catalog folder that is missing, empty or holds a bad file") {
  DeviceCatalog catalog;
  TempDir t("bad-dir");
  const Error missing = add_dir_error(catalog, t.path / "nope");
  CHECK(missing.kind() == ErrorKind::io);
  CHECK(contains(missing.message(), "not found"));
  const Error empty = add_dir_error(catalog, t.path);
  CHECK(empty.kind() == ErrorKind::io);
  CHECK(contains(empty.message(), "holds no device files (*.yaml)"));
  // A bad file: the parser's located error, in that file.
  write(t.path / "bad.yaml", replaced(h100_as("bad"), "vendor: nvidia\n", "vendor: intel\n"));
  const Error bad = add_dir_error(catalog, t.path);
  CHECK(bad.kind() == ErrorKind::input);
  CHECK(bad.where().file == (t.path / "bad.yaml").string());
  CHECK(bad.where().line == line_of(t.path / "bad.yaml", "vendor:"));
  CHECK(contains(bad.message(), "'intel' is not allowed"));
  // And the name must match the file name, as in the embedded catalog.
  fs::remove(t.path / "bad.yaml");
  write(t.path / "other.yaml", h100_as("not-other"));
  CHECK(contains(add_dir_error(catalog, t.path).message(), "does not match the file name 'other.yaml'"));
}
