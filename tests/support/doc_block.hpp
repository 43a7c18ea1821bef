#pragma once
// A block of a doc that a test regenerates: the text between `<!-- begin NAME -->` and
// `<!-- end NAME -->` must equal what the test computes; with INFLECT_UPDATE_DOCS=1 the test
// rewrites it instead (figures quoted in docs come from a run, never typed by hand).
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

namespace inflect::test {

/// Checks (or, with INFLECT_UPDATE_DOCS set, rewrites) block `name` of `doc_path` to be `want`.
inline void check_doc_block(const std::string& doc_path, const std::string& name, const std::string& want) {
  std::ifstream in(doc_path, std::ios::binary);
  REQUIRE_MESSAGE(in, doc_path, " cannot be read");
  std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string begin = "<!-- begin " + name + " -->\n", end = "<!-- end " + name + " -->";
  const std::size_t b = doc.find(begin), e = doc.find(end);
  REQUIRE_MESSAGE((b != std::string::npos && e != std::string::npos && b < e), doc_path, " has no block ", name);
  const std::string have = doc.substr(b + begin.size(), e - b - begin.size());
  if (have != want && std::getenv("INFLECT_UPDATE_DOCS")) {
    doc.replace(b + begin.size(), e - b - begin.size(), want);
    std::ofstream(doc_path, std::ios::binary) << doc;
    MESSAGE("rewrote block ", name, " of ", doc_path);
    return;
  }
  INFO(doc_path, " block ", name, " differs from this run; INFLECT_UPDATE_DOCS=1 rewrites it. This run:\n", want);
  CHECK(have == want);
}

}  // namespace inflect::test
