// `docguard whatif`: judges a traffic recording offline with a candidate configuration, as a
// live docguard with that configuration would have judged the same traffic.
//   whatif --config FILE --recording DIR [--format text|json|html] [--output FILE] [--show-values]
#pragma once

namespace docguard::proxy {

// argv[0] is "whatif". Exit code: 0 nothing would be refused, 1 something would, 2 a usage or
// I/O error.
int run_whatif(int argc, char** argv);

}  // namespace docguard::proxy
