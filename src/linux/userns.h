// User namespace: the invoking uid/gid mapped to themselves.
//
//   IdMaps maps = IdMapsForSelf();                 // parent: "1000 1000 1\n"
//   int err = WriteIdMapsInChild(maps);            // child, right after CLONE_NEWUSER
#pragma once

#include <string>

namespace agentbox {

struct IdMaps {
  std::string uid_map;  // "<uid> <uid> 1\n"
  std::string gid_map;
};

[[nodiscard]] IdMaps IdMapsForSelf();

// Child only: denies setgroups (required before an unprivileged gid_map, and it keeps the
// sandbox from dropping supplementary groups to escape a negative group permission), then
// writes its own maps. Returns 0 or errno. No allocation.
[[nodiscard]] int WriteIdMapsInChild(const IdMaps& maps) noexcept;

}  // namespace agentbox
