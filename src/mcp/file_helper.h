// The file operations of read_local_file and write_local_file, run by agentbox itself INSIDE
// a sandbox whose only grant is the file (read) or its directory (write), so the kernel, not
// this code, decides what may be touched.
//
//   agentbox __file-helper read PATH OFFSET MAX   stdout: the bytes; stderr: {"size": N}
//   agentbox __file-helper write PATH MODE        stdin: the content; stdout: {"bytes": N}
//
// MODE is create | overwrite | append. Failures: exit 1, stderr "<syscall>: <reason>".
#pragma once

#include <span>

namespace agentbox::mcp {

inline constexpr const char* kFileHelperCommand = "__file-helper";

int FileHelperMain(std::span<char* const> args);

}  // namespace agentbox::mcp
