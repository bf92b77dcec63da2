// Landlock user-space ABI, written out here so agentbox does not depend on the version of
// <linux/landlock.h> it is built against (Debian 12 ships 6.1 headers, which stop at ABI 2).
//
// Everything has our own name (kLandlock*, agentbox_landlock_*), so it cannot clash with a
// newer system header that defines the same things. Values are from the kernel's
// include/uapi/linux/landlock.h up to ABI 7. Which of them the running kernel accepts is
// detected at run time (LandlockAbi() in linux/landlock.h), never from this file.
#pragma once

#include <sys/syscall.h>

#include <cstdint>

// Landlock's syscall numbers are the same on every architecture but alpha.
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

namespace agentbox::uapi {

// landlock_create_ruleset() flags.
inline constexpr uint32_t kLandlockCreateRulesetVersion = 1U << 0;  // returns the ABI

// landlock_add_rule() rule types (enum landlock_rule_type).
inline constexpr int kLandlockRulePathBeneath = 1;
inline constexpr int kLandlockRuleNetPort = 2;  // ABI 4

// Filesystem access rights (handled_access_fs, allowed_access of a path rule).
inline constexpr uint64_t kLandlockAccessFsExecute = 1ULL << 0;     // ABI 1, file
inline constexpr uint64_t kLandlockAccessFsWriteFile = 1ULL << 1;   // ABI 1, file
inline constexpr uint64_t kLandlockAccessFsReadFile = 1ULL << 2;    // ABI 1, file
inline constexpr uint64_t kLandlockAccessFsReadDir = 1ULL << 3;     // ABI 1
inline constexpr uint64_t kLandlockAccessFsRemoveDir = 1ULL << 4;   // ABI 1
inline constexpr uint64_t kLandlockAccessFsRemoveFile = 1ULL << 5;  // ABI 1
inline constexpr uint64_t kLandlockAccessFsMakeChar = 1ULL << 6;    // ABI 1
inline constexpr uint64_t kLandlockAccessFsMakeDir = 1ULL << 7;     // ABI 1
inline constexpr uint64_t kLandlockAccessFsMakeReg = 1ULL << 8;     // ABI 1
inline constexpr uint64_t kLandlockAccessFsMakeSock = 1ULL << 9;    // ABI 1
inline constexpr uint64_t kLandlockAccessFsMakeFifo = 1ULL << 10;   // ABI 1
inline constexpr uint64_t kLandlockAccessFsMakeBlock = 1ULL << 11;  // ABI 1
inline constexpr uint64_t kLandlockAccessFsMakeSym = 1ULL << 12;    // ABI 1
inline constexpr uint64_t kLandlockAccessFsRefer = 1ULL << 13;      // ABI 2
inline constexpr uint64_t kLandlockAccessFsTruncate = 1ULL << 14;   // ABI 3, file
inline constexpr uint64_t kLandlockAccessFsIoctlDev = 1ULL << 15;   // ABI 5, file

// Network access rights (handled_access_net, allowed_access of a port rule). ABI 4.
inline constexpr uint64_t kLandlockAccessNetBindTcp = 1ULL << 0;
inline constexpr uint64_t kLandlockAccessNetConnectTcp = 1ULL << 1;

// IPC scopes (scoped). ABI 6.
inline constexpr uint64_t kLandlockScopeAbstractUnixSocket = 1ULL << 0;
inline constexpr uint64_t kLandlockScopeSignal = 1ULL << 1;

}  // namespace agentbox::uapi

// struct landlock_ruleset_attr as of ABI 6. The kernel takes a size argument: pass
// offsetof the first field the running ABI does not know (or sizeof when it knows all).
struct agentbox_landlock_ruleset_attr {
  uint64_t handled_access_fs;   // ABI 1
  uint64_t handled_access_net;  // ABI 4
  uint64_t scoped;              // ABI 6
};

// struct landlock_path_beneath_attr (packed, 12 bytes).
struct __attribute__((packed)) agentbox_landlock_path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
};

// struct landlock_net_port_attr. ABI 4. `port` is in host byte order.
struct agentbox_landlock_net_port_attr {
  uint64_t allowed_access;
  uint64_t port;
};

static_assert(sizeof(agentbox_landlock_ruleset_attr) == 24);
static_assert(sizeof(agentbox_landlock_path_beneath_attr) == 12);
static_assert(sizeof(agentbox_landlock_net_port_attr) == 16);
