// The filter BuildSeccompProgram compiles, compiled at build time (seccomp_gen.cc).
// tests/unit/linux_seccomp_test.cc checks that the two are identical.
#include <iterator>

#include "linux/seccomp.h"

namespace agentbox {
namespace {

constexpr sock_filter kFilter[] = {
#include "seccomp_filter.inc"
};

}  // namespace

const SeccompProgram& EmbeddedSeccompProgram() {
  static const SeccompProgram program{{std::begin(kFilter), std::end(kFilter)}};
  return program;
}

}  // namespace agentbox
