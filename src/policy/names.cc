#include "policy/policy.h"

namespace agentbox {

const char* AccessName(Access access) {
  switch (access) {
    case Access::kNone:
      return "none";
    case Access::kReadOnly:
      return "readonly";
    case Access::kReadWrite:
      return "readwrite";
  }
  return "none";
}

const char* NetworkModeName(NetworkMode mode) {
  switch (mode) {
    case NetworkMode::kBlock:
      return "block";
    case NetworkMode::kProxy:
      return "proxy";
    case NetworkMode::kAllow:
      return "allow";
  }
  return "block";
}

const char* DecisionKindName(DecisionKind kind) {
  switch (kind) {
    case DecisionKind::kPath:
      return "path";
    case DecisionKind::kNetwork:
      return "network";
    case DecisionKind::kDomain:
      return "domain";
    case DecisionKind::kTimeout:
      return "timeout";
    case DecisionKind::kLimit:
      return "limit";
  }
  return "path";
}

}  // namespace agentbox
