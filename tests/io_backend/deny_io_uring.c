/* Runs a command with io_uring_setup refused (EPERM), the way a container runtime's seccomp
 * profile refuses it: a test of docguard's fallback needs the kernel to say no without root,
 * sysctl (kernel.io_uring_disabled) or a container.
 *
 *   deny_io_uring COMMAND [ARGS...]
 *
 * The filter is inherited across execve, so a program the command re-executes is refused too.
 * It matches the system call number only: io_uring_setup has the same number (425) in every
 * architecture's table, so no architecture check is needed for this one call. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: deny_io_uring COMMAND [ARGS...]\n");
    return 2;
  }
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog program = {.len = sizeof filter / sizeof filter[0], .filter = filter};
  /* Without no_new_privs an unprivileged process may not install a filter. */
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
    fprintf(stderr, "deny_io_uring: cannot install the seccomp filter: %s\n", strerror(errno));
    return 2;
  }
  execvp(argv[1], argv + 1);
  fprintf(stderr, "deny_io_uring: cannot execute %s: %s\n", argv[1], strerror(errno));
  return 127;
}
