// --fidelity and reports name the fidelities through plan::parse_fidelity / fidelity_name only.
#include <doctest/doctest.h>

#include "inflect/core/error.hpp"
#include "inflect/plan/fidelity.hpp"

using namespace inflect;

TEST_CASE("fidelity names round-trip and an unknown one is an input error naming the allowed ones") {
  for (plan::Fidelity f : {plan::Fidelity::full, plan::Fidelity::symmetric})
    CHECK(plan::parse_fidelity(plan::fidelity_name(f)) == f);
  CHECK(plan::fidelity_name(plan::Fidelity::full) == "full");
  CHECK(plan::fidelity_name(plan::Fidelity::symmetric) == "symmetric");
  try {
    (void)plan::parse_fidelity("ful");
    FAIL("'ful' parsed");
  } catch (const core::Error& e) {
    CHECK(e.kind() == core::ErrorKind::input);
    CHECK(e.message() == "unknown fidelity 'ful' (did you mean 'full'?); allowed: full, symmetric");
  }
  CHECK_THROWS_AS((void)plan::parse_fidelity("Full "), core::Error);
}
