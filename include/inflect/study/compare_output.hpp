#pragma once
// A comparison as people and CI systems read it: a terminal table, Markdown for a pull-request
// comment, and JUnit XML (one test case per point and metric, plus one per point for its presence
// and status) that CI systems display. All three are deterministic: same comparison, same bytes.
#include <string>

#include "inflect/study/compare.hpp"

namespace inflect::study {

/// What `inflect compare` prints: one row per point with each metric's change, then every
/// failure with both values, then the input warnings. `all` lists unchanged points too (else only
/// points that changed or failed, and a count of the others).
std::string comparison_text(const Comparison& c, bool all = false);
/// The same as Markdown: a headline with the verdict, a table of failures, the table of every
/// point (folded when long), the warnings.
std::string comparison_markdown(const Comparison& c, const std::string& title = "inflect compare");
/// JUnit XML (the Jenkins/Ant schema: tests/data/junit/jenkins-junit.xsd); `suite` names the
/// testsuite.
std::string comparison_junit(const Comparison& c, const std::string& suite = "inflect compare");

}  // namespace inflect::study
