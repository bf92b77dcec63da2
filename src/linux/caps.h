// Capabilities: the sandbox ends with every capability set empty.
//
//   int err = DropCapabilitiesInChild();   // one-way
#pragma once

namespace agentbox {

// Child only, one-way. Locks the securebits so that uid 0 gains nothing at execve, empties
// the bounding set, clears the ambient set, then sets permitted, effective and inheritable
// to zero. Returns 0 or errno. No allocation.
[[nodiscard]] int DropCapabilitiesInChild() noexcept;

}  // namespace agentbox
