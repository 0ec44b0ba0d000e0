/*
 * fuzz_util.h -- what the file-reading fuzz targets share (make fuzz).
 *
 * The model and CSV loaders read a path, so each input is written to one
 * memory file (memfd) and read back through /proc/self/fd/N: no disk, no
 * file per input.
 */
#ifndef KCAST_FUZZ_UTIL_H
#define KCAST_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* The path of a memory file holding data[0..size), or NULL. */
static inline const char *fuzz_memfile(const uint8_t *data, size_t size) {
  static int fd = -1;
  static char path[64];
  if (fd < 0) {
    fd = memfd_create("kcast-fuzz", 0);
    if (fd < 0) return NULL;
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  }
  if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size)) return NULL;
  return path;
}

#endif
