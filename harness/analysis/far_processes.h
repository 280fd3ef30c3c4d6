// A process now and then lands far from its siblings: a different memory layout, a neighbour's burst,
// a migration. In a file whose repetitions come from fresh processes (run --processes), one such
// process among five carries Welch's mean and widens its standard error several times over, so a
// steady 10% change goes unseen. compare sets such processes aside — unless they look like a second
// mode that the other file shares, when it keeps every value.
#pragma once
#include <cstddef>
#include <vector>

namespace offloadbench {

// How far (in robust standard deviations, 1.4826·MAD, of the log values) a value must lie from its
// file's median to be set aside, and how wide (in standard deviations of the other file's kept values)
// the band is in which a set-aside value counts as the other file's mode.
constexpr double kFarRobustSigmas = 5.0;
constexpr double kSharedModeSigmas = 3.0;
// A floor on the robust spread (log units, 0.01%): identical repetitions give a MAD of 0, and a
// difference below the timer's grain is not an excursion.
constexpr double kFarSigmaFloor = 1e-4;

struct KeptValues {
  std::vector<double> kept, far;
};

// The values of one file (log slowness): at most ⌊(n−1)/2⌋ of them, those farther than
// kFarRobustSigmas robust standard deviations from the median, set aside; none below 5 values.
KeptValues set_aside_far(const std::vector<double>& values);

// Both files' values with the far ones set aside, or all of them (nothing in `far`) when a set-aside
// value of either file lies within kSharedModeSigmas standard deviations of the other file's kept
// range: the "far" process is then where the other file's processes are, and a shift between the
// kept values could be two modes drawn in different proportions.
std::pair<KeptValues, KeptValues> set_aside_far_pair(const std::vector<double>& base, const std::vector<double>& candidate);

}  // namespace offloadbench
