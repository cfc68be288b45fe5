// The sinks' destructors, defined once here so that each interface's virtual table is emitted
// in one object rather than in every file that includes the header.
#include "docguard/rules/engine_sinks.h"

namespace docguard::rules {

MeasurementSink::~MeasurementSink() = default;
AdviceSink::~AdviceSink() = default;

}  // namespace docguard::rules
