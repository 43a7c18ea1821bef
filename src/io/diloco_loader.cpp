#include "io/diloco_loader.hpp"

#include <fmt/format.h>

#include "inflect/io/options.hpp"
#include "inflect/plan/diloco.hpp"

namespace inflect::io {

namespace {

int read_count(const Node& n, const char* key) {
  const OptionSpec& o = option(key);
  return static_cast<int>(n.as_int(o.min, o.max));
}

double read_number(const Node& n, const char* key) {
  const OptionSpec& o = option(key);
  const double v = n.as_double();
  if (!(v >= static_cast<double>(o.min) && v <= static_cast<double>(o.max)))
    n.fail(fmt::format("{} is out of range; allowed: a number in [{}, {}]", v, o.min, o.max));
  return v;
}

}  // namespace

plan::DilocoSpec read_diloco(const Node& node) {
  MapReader r(node);
  plan::DilocoSpec d;
  d.sync_every = read_count(r.required("sync_every"), "training.diloco.sync_every");
  d.workers = read_count(r.required("workers"), "training.diloco.workers");
  if (auto n = r.optional("compression"))
    d.compression = *plan::compression_from_name(n->as_choice(option("training.diloco.compression").allowed));
  auto fraction = r.optional("topk_fraction");
  if (d.compression == plan::OuterCompression::topk) {
    if (!fraction)
      node.fail("compression: topk needs topk_fraction: the fraction of the pseudo-gradient's elements each rank sends, "
                "e.g. 0.01");
    d.topk_fraction = read_number(*fraction, "training.diloco.topk_fraction");
  } else if (fraction) {
    fraction->fail(fmt::format("topk_fraction applies to compression: topk only (this experiment's compression is {})",
                               plan::compression_name(d.compression)));
  }
  if (auto n = r.optional("fragments")) d.fragments = read_count(*n, "training.diloco.fragments");
  if (auto n = r.optional("token_multiplier")) {
    d.token_multiplier = read_number(*n, "training.diloco.token_multiplier");
    d.token_multiplier_given = true;
  }
  r.finish();
  return d;
}

}  // namespace inflect::io
