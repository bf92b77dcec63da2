// int80: makes a 32-bit system call (int $0x80, getpid = 20 in the i386 table) from this
// 64-bit process and prints its result. The sandbox's seccomp filter knows only the native
// architecture and kills the process for any other (SIGSYS, exit status 159). Outside the
// sandbox the kernel answers the call (or, without IA-32 emulation, raises SIGSEGV).
#include <cstdio>

int main() {
#if defined(__x86_64__)
  long rc = 20;  // __NR_getpid in arch/x86/entry/syscalls/syscall_32.tbl
  asm volatile("int $0x80" : "+a"(rc) : : "memory", "r8", "r9", "r10", "r11");
  std::printf("int80 returned %ld\n", rc);
  return 0;
#else
  std::printf("int80: not x86-64\n");
  return 3;
#endif
}
