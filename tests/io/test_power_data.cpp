// The catalog's power data against the power model: every device's calibration GEMM draws the
// board power at its measured clock, and power rises with the clock for kernels of every size.
#include <doctest/doctest.h>

#include "inflect/hw/compute_model.hpp"
#include "inflect/hw/power_model.hpp"
#include "inflect/io/device_catalog.hpp"

using namespace inflect;

TEST_CASE("power model: power never falls as the clock rises (what level_under's bisection needs)") {
  const hw::PowerModel pm(io::find_device("h100-sxm"));
  hw::ComputeModel cm(io::find_device("h100-sxm"));
  for (std::int64_t n : {256, 1024, 4096, 16384}) {
    const core::KernelCost k{core::KernelClass::gemm, core::Precision::bf16, core::Flops(0), core::Bytes(6.0 * n * n), n, n, n, 1};
    const hw::KernelPower p = pm.profile(k, cm);
    for (int l = 1; l <= p.cal_level; ++l) CHECK(pm.power(p, l) >= pm.power(p, l - 1));
  }
}

TEST_CASE("power model: the calibration GEMM draws exactly the board power at its measured clock") {
  for (const auto& d : io::device_catalog()) {
    CAPTURE(d.name);
    const hw::PowerModel pm(d);
    hw::ComputeModel cm(d);
    const auto& c = d.power;
    const double elem = core::bytes_per_element(c.calibration_precision);
    const core::KernelCost k{core::KernelClass::gemm, c.calibration_precision, core::Flops(0),
                             core::Bytes(elem * static_cast<double>(c.calibration_m * c.calibration_k +
                                                                    c.calibration_k * c.calibration_n +
                                                                    c.calibration_m * c.calibration_n)),
                             c.calibration_m, c.calibration_n, c.calibration_k, 1};
    const hw::KernelPower p = pm.profile(k, cm);
    // The compute model reproduces the measured rate (the curve is anchored there), so at its
    // clock the GEMM's energy over its time is board - idle, up to the grid and the launch cost.
    CHECK(pm.clock_mhz(p.cal_level) == doctest::Approx(c.calibration_clock_mhz).epsilon(0.02));
    CHECK(pm.power(p, p.cal_level).value() <= d.board_power.value() * (1 + 1e-9));
    CHECK(pm.power(p, p.cal_level).value() >= 0.97 * d.board_power.value());
  }
}

