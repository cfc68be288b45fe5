// The advisor's histogram: exact below 16, then 8 buckets per power of two (values within ~12% of
// each other share a bucket), over the whole 64-bit range; ~4 KiB, so a profile's memory does not
// depend on how many values it has seen. base/log_histogram.h is the one histogram.
#pragma once

#include "docguard/base/log_histogram.h"

namespace docguard::advisor {

using LogHistogram = base::LogHistogram<3, 64>;

}  // namespace docguard::advisor
