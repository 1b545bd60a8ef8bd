/* Linked into every binary built against the glibc 2.28 sysroot
   (tools/glibc_sysroot.py), which links GCC's libstdc++.a statically. That
   archive was built against the build machine's newer glibc and refers to
   symbols glibc 2.28 lacks; they are defined here, hidden (-fvisibility=hidden
   and --exclude-libs), so each binary uses its own and the process's glibc is
   neither needed for them nor interposed. */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

/* glibc 2.32: nonzero only while glibc knows the process to be single
   threaded, when libstdc++ may skip atomic operations (reference counts,
   once-flags). Zero, always, means "maybe threaded": atomics every time,
   which is right in every process. */
char __libc_single_threaded = 0;

/* glibc 2.36: std::random_device's default source in libstdc++.a. Bytes from
   the kernel (getrandom(2), then /dev/urandom); like glibc's, it never
   returns an error and aborts if the kernel gives no randomness at all. */
static int fill_random(void *buffer, size_t size) {
  unsigned char *at = buffer;
  while (size > 0) {
    long got = syscall(SYS_getrandom, at, size, 0);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      break;
    at += got;
    size -= (size_t)got;
  }
  if (size == 0)
    return 0;
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  while (size > 0) {
    ssize_t got = read(fd, at, size);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      break;
    at += got;
    size -= (size_t)got;
  }
  close(fd);
  return size == 0 ? 0 : -1;
}

uint32_t arc4random(void) {
  int saved = errno;
  uint32_t value;
  if (fill_random(&value, sizeof value) != 0)
    abort();
  errno = saved;
  return value;
}
