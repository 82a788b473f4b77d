/* tfocl plugin: program binaries kept between processes, so that a second
 * process starts warm on drivers that keep nothing themselves (Intel's CPU
 * runtime and others: compiling the families a Keras model needs takes
 * seconds there). Not used on PoCL, which keeps its own (program_cache.c,
 * keeps_binaries).
 *
 * One file per (device, program): the device's binary as the driver hands
 * it out (CL_PROGRAM_BINARIES), under
 *     $TFOCL_CACHE_DIR/programs, else $XDG_CACHE_HOME/tfocl/programs,
 *     else ~/.cache/tfocl/programs;
 * TFOCL_CACHE_DIR=off (or empty) keeps nothing. A program binary is code
 * the driver runs, so the directory is used only when it is the user's own
 * and no one else can write it (created 0700; a directory of another owner
 * or writable by group or others is ignored, once, with a trace line), and
 * each file only when it is a regular file of the user's, opened without
 * following a link.
 *
 * A file names its full key (device name and version, driver and platform
 * versions, the program's family, build options, and the source's length
 * and hash) and a checksum of key and binary; the file name is a hash of
 * the key. Anything that does not match (another key under the same name,
 * a truncated or corrupt file, another format) is ignored, and the program
 * built from source replaces it. Files are written to a temporary name and
 * renamed, so a reader sees a whole file or none. Any failure to read or
 * write costs only the build. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_dir.h"
#include "ocl.h"

#define MAGIC "tfocl program binary 1\n"
#define MAX_KEY 4096
/* Larger than any program binary a driver hands out for these families. */
#define MAX_BINARY ((size_t)256 << 20)

static atomic_uint binaries_loaded;

unsigned ocl_program_binaries_loaded(void) {
  return atomic_load(&binaries_loaded);
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}
#define FNV_START 14695981039346656037ull

/* mkdir that accepts an existing directory. */
static bool make_dir(const char *path) {
  return mkdir(path, 0700) == 0 || errno == EEXIST;
}

static bool private_dir(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  return st.st_uid == geteuid() && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

bool ocl_cache_subdir(const char *sub, char *dir, size_t size) {
  const struct ocl_config *config = ocl_config();
  const char *base = config->cache_base;
  int n;

  dir[0] = '\0';
  if (base[0] == '\0') return false;
  if (config->cache_base_in_home) {
    /* ~/.cache/tfocl: ~/.cache first, made as XDG would make it. */
    char parent[sizeof config->cache_base];
    size_t len = strlen(base) - strlen("/tfocl");
    memcpy(parent, base, len);
    parent[len] = '\0';
    make_dir(parent);
  }
  n = snprintf(dir, size, "%s/%s", base, sub);
  if (n < 0 || (size_t)n >= size) {
    dir[0] = '\0';
    return false;
  }
  if (!make_dir(base) || !make_dir(dir)) {
    OCL_TRACE("cache: cannot create %s (%s); nothing kept there", dir,
              strerror(errno));
    dir[0] = '\0';
    return false;
  }
  if (!private_dir(dir)) {
    OCL_TRACE("cache: %s is not a directory of this user that only it can "
              "write; not used",
              dir);
    dir[0] = '\0';
    return false;
  }
  return true;
}

/* The key of device i's binary of a program. */
static bool key_of(cl_platform_id platform, cl_device_id device,
                   const char *family, const char *options,
                   const char *source, char *key, size_t size) {
  char name[256] = "", version[256] = "", driver[256] = "", pname[256] = "",
       pversion[256] = "";
  clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name - 1, name, NULL);
  clGetDeviceInfo(device, CL_DEVICE_VERSION, sizeof version - 1, version,
                  NULL);
  clGetDeviceInfo(device, CL_DRIVER_VERSION, sizeof driver - 1, driver, NULL);
  clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);
  clGetPlatformInfo(platform, CL_PLATFORM_VERSION, sizeof pversion - 1,
                    pversion, NULL);
  size_t length = strlen(source);
  int n = snprintf(key, size,
                   "device %s\nversion %s\ndriver %s\nplatform %s %s\n"
                   "family %s\noptions %s\nsource %zu %016llx\n",
                   name, version, driver, pname, pversion, family, options,
                   length,
                   (unsigned long long)fnv1a(FNV_START, source, length));
  return n > 0 && (size_t)n < size;
}

static bool path_of(const char *dir, const char *key, char *path,
                    size_t size) {
  int n = snprintf(path, size, "%s/%016llx.bin", dir,
                   (unsigned long long)fnv1a(FNV_START, key, strlen(key)));
  return n > 0 && (size_t)n < size;
}

static bool read_all(int fd, void *buf, size_t n) {
  char *p = buf;
  while (n > 0) {
    ssize_t got = read(fd, p, n);
    if (got <= 0) {
      if (got < 0 && errno == EINTR) continue;
      return false;
    }
    p += got;
    n -= (size_t)got;
  }
  return true;
}

static bool write_all(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n > 0) {
    ssize_t put = write(fd, p, n);
    if (put <= 0) {
      if (put < 0 && errno == EINTR) continue;
      return false;
    }
    p += put;
    n -= (size_t)put;
  }
  return true;
}

/* The binary stored under `key` (malloc'd), or NULL. */
static unsigned char *read_entry(const char *dir, const char *key,
                                 size_t *size) {
  char path[4200];
  struct stat st;
  unsigned char *binary = NULL;
  char magic[sizeof MAGIC - 1], stored_key[MAX_KEY];
  uint64_t key_length, length, checksum;

  if (!path_of(dir, key, path, sizeof path)) return NULL;
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return NULL;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
      (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    goto fail;
  if (!read_all(fd, magic, sizeof magic) ||
      memcmp(magic, MAGIC, sizeof magic) != 0 ||
      !read_all(fd, &key_length, sizeof key_length) ||
      key_length != strlen(key) || key_length >= sizeof stored_key ||
      !read_all(fd, stored_key, (size_t)key_length) ||
      memcmp(stored_key, key, (size_t)key_length) != 0 ||
      !read_all(fd, &length, sizeof length) || length == 0 ||
      length > MAX_BINARY ||
      (uint64_t)st.st_size != sizeof magic + 3 * sizeof(uint64_t) +
                                  key_length + length)
    goto fail;
  binary = malloc((size_t)length);
  if (!binary || !read_all(fd, binary, (size_t)length) ||
      !read_all(fd, &checksum, sizeof checksum) ||
      checksum != fnv1a(fnv1a(FNV_START, key, (size_t)key_length), binary,
                        (size_t)length))
    goto fail;
  close(fd);
  *size = (size_t)length;
  return binary;
fail:
  free(binary);
  close(fd);
  return NULL;
}

static void write_entry(const char *dir, const char *key,
                        const unsigned char *binary, size_t size) {
  char path[4200], tmp[4300];
  uint64_t key_length = strlen(key), length = size;
  uint64_t checksum =
      fnv1a(fnv1a(FNV_START, key, (size_t)key_length), binary, size);

  if (!path_of(dir, key, path, sizeof path)) return;
  int n = snprintf(tmp, sizeof tmp, "%s.XXXXXX", path);
  if (n < 0 || (size_t)n >= sizeof tmp) return;
  int fd = mkstemp(tmp); /* 0600, O_EXCL */
  if (fd < 0) return;
  bool ok = write_all(fd, MAGIC, sizeof MAGIC - 1) &&
            write_all(fd, &key_length, sizeof key_length) &&
            write_all(fd, key, (size_t)key_length) &&
            write_all(fd, &length, sizeof length) &&
            write_all(fd, binary, size) &&
            write_all(fd, &checksum, sizeof checksum);
  ok = close(fd) == 0 && ok;
  if (!ok || rename(tmp, path) != 0) {
    OCL_TRACE("program binaries: cannot write %s (%s)", path, strerror(errno));
    unlink(tmp);
  }
}

cl_program ocl_program_binaries_load(const char *dir, cl_context context,
                                     cl_platform_id platform,
                                     const cl_device_id *devices,
                                     cl_uint num_devices, const char *family,
                                     const char *options,
                                     const char *source) {
  unsigned char **binaries = calloc(num_devices, sizeof *binaries);
  size_t *sizes = calloc(num_devices, sizeof *sizes);
  char *key = malloc(MAX_KEY);
  cl_program program = NULL;
  cl_uint i;

  if (!binaries || !sizes || !key || num_devices == 0) goto out;
  for (i = 0; i < num_devices; i++)
    if (!key_of(platform, devices[i], family, options, source, key, MAX_KEY) ||
        (binaries[i] = read_entry(dir, key, &sizes[i])) == NULL)
      goto out;
  cl_int err;
  program = clCreateProgramWithBinary(
      context, num_devices, devices, sizes,
      (const unsigned char **)binaries, NULL, &err);
  if (err != CL_SUCCESS) {
    program = NULL;
    goto out;
  }
  /* A binary still takes a build (a link, for most drivers). */
  if (clBuildProgram(program, 0, NULL, options, NULL, NULL) != CL_SUCCESS) {
    clReleaseProgram(program);
    program = NULL;
    goto out;
  }
  atomic_fetch_add(&binaries_loaded, 1);
out:
  if (binaries)
    for (i = 0; i < num_devices; i++) free(binaries[i]);
  free(binaries);
  free(sizes);
  free(key);
  return program;
}

void ocl_program_binaries_save(const char *dir, cl_program program,
                               cl_platform_id platform, const char *family,
                               const char *options, const char *source) {
  cl_uint num_devices = 0;
  cl_device_id *devices = NULL;
  size_t *sizes = NULL;
  unsigned char **binaries = NULL;
  char *key = malloc(MAX_KEY);
  cl_uint i;

  if (!key ||
      clGetProgramInfo(program, CL_PROGRAM_NUM_DEVICES, sizeof num_devices,
                       &num_devices, NULL) != CL_SUCCESS ||
      num_devices == 0)
    goto out;
  devices = calloc(num_devices, sizeof *devices);
  sizes = calloc(num_devices, sizeof *sizes);
  binaries = calloc(num_devices, sizeof *binaries);
  if (!devices || !sizes || !binaries ||
      clGetProgramInfo(program, CL_PROGRAM_DEVICES,
                       num_devices * sizeof *devices, devices,
                       NULL) != CL_SUCCESS ||
      clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES,
                       num_devices * sizeof *sizes, sizes, NULL) != CL_SUCCESS)
    goto out;
  for (i = 0; i < num_devices; i++) {
    /* A device without a binary: nothing worth keeping for any. */
    if (sizes[i] == 0 || sizes[i] > MAX_BINARY ||
        (binaries[i] = malloc(sizes[i])) == NULL)
      goto out;
  }
  if (clGetProgramInfo(program, CL_PROGRAM_BINARIES,
                       num_devices * sizeof *binaries, binaries,
                       NULL) != CL_SUCCESS)
    goto out;
  for (i = 0; i < num_devices; i++)
    if (key_of(platform, devices[i], family, options, source, key, MAX_KEY))
      write_entry(dir, key, binaries[i], sizes[i]);
out:
  if (binaries)
    for (i = 0; i < num_devices; i++) free(binaries[i]);
  free(binaries);
  free(sizes);
  free(devices);
  free(key);
}
