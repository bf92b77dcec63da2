#include "linux/userns.h"

#include <unistd.h>

#include "linux/child_util.h"

namespace agentbox {

IdMaps IdMapsForSelf() {
  const std::string uid = std::to_string(::geteuid());
  const std::string gid = std::to_string(::getegid());
  return {uid + " " + uid + " 1\n", gid + " " + gid + " 1\n"};
}

int WriteIdMapsInChild(const IdMaps& maps) noexcept {
  if (const int err = child::WriteFile("/proc/self/setgroups", "deny"); err != 0) return err;
  if (const int err = child::WriteFile("/proc/self/uid_map", maps.uid_map.c_str()); err != 0) {
    return err;
  }
  return child::WriteFile("/proc/self/gid_map", maps.gid_map.c_str());
}

}  // namespace agentbox
