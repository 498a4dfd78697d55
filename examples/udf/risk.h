#pragma once
// The C++ side of `extern fn risk(amount: float, country: string) -> float` in
// examples/fraud_alert.flow. Flow `float` is double, `string` arrives as const std::string&.
// The function is found by the name in the declaration, at global scope. It must be pure and
// thread-safe: every parallel subtask calls it concurrently.

#include <algorithm>
#include <cmath>
#include <string>

// A toy risk model: large amounts are riskier (logistic in log10(amount)), and some countries
// carry a fixed surcharge. Returns a score in [0, 1].
inline double risk(double amount, const std::string& country) {
  if (!(amount > 0.0)) return 0.0;  // also catches NaN
  const double size = 1.0 / (1.0 + std::exp(-3.0 * (std::log10(amount) - 3.0)));
  double surcharge = 0.0;
  if (country == "NG" || country == "BR") {
    surcharge = 0.25;
  } else if (country != "DE" && country != "FR" && country != "US") {
    surcharge = 0.1;
  }
  return std::clamp(size + surcharge, 0.0, 1.0);
}
