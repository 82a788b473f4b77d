/* The loader fuzz target's plugin: tests/unit/stub_plugin.c (every table
 * filled, no-op), whose tables are then mutated by the fuzz input before
 * the host validates them: struct sizes, names and types, any function
 * pointer NULL, the SE_InitPlugin status, the device count. The input is
 * read from tfocl_fuzz_input, exported by the fuzz executable (resolved at
 * dlopen, as the TF_* functions are). */
#include <stdint.h>

#define SE_InitPlugin stub_SE_InitPlugin
#include "../unit/stub_plugin.c"
#undef SE_InitPlugin

extern const uint8_t *tfocl_fuzz_input;
extern size_t tfocl_fuzz_input_size;

static size_t cursor;

static uint8_t next(void)
{
  return cursor < tfocl_fuzz_input_size ? tfocl_fuzz_input[cursor++] : 0;
}

static size_t fuzz_size(size_t good)
{
  switch (next() % 8) {
  case 0: return 0;             /* "ours" */
  case 1: return good - 8;       /* too small */
  case 2: return good + 64;      /* a newer core */
  case 3: return 1;
  default: return good;
  }
}

static const char *fuzz_name(const char *good)
{
  static const char *const names[] = {"", "bad name", "lower", "A_",
                                      "_X", "STUB", "GPU", "CPU"};
  uint8_t b = next();
  if (b % 4 != 0)
    return good;
  return b & 0x80 ? NULL : names[(b >> 2) % 8];
}

/* Clears some of the first `count` pointer members after struct_size. */
static void fuzz_pointers(void *table, size_t table_size)
{
  void **fields = (void **)((char *)table + sizeof(size_t));
  size_t count = (table_size - sizeof(size_t)) / sizeof(void *);
  for (size_t i = 0; i < count; i += 8) {
    uint8_t mask = next();
    for (size_t b = 0; b < 8 && i + b < count; b++)
      if (mask & (1u << b) && next() % 4 == 0)
        fields[i + b] = NULL;
  }
}

static void (*real_create_se)(const SP_Platform *,
                              SE_CreateStreamExecutorParams *, TF_Status *);
static void (*real_create_device_fns)(const SP_Platform *,
                                      SE_CreateDeviceFnsParams *, TF_Status *);
static void (*real_get_device_count)(const SP_Platform *, int *, TF_Status *);
static int device_count_choice;

static void fuzz_create_se(const SP_Platform *p,
                           SE_CreateStreamExecutorParams *params,
                           TF_Status *st)
{
  real_create_se(p, params, st);
  if (next() % 2) {
    fuzz_pointers(params->stream_executor, SP_STREAMEXECUTOR_STRUCT_SIZE);
    params->stream_executor->struct_size = fuzz_size(SP_STREAMEXECUTOR_STRUCT_SIZE);
  }
  if (next() % 16 == 0)
    TF_SetStatus(st, TF_INTERNAL, "fuzz: create_stream_executor failed");
}

static void fuzz_create_device_fns(const SP_Platform *p,
                                   SE_CreateDeviceFnsParams *params,
                                   TF_Status *st)
{
  real_create_device_fns(p, params, st);
  if (next() % 4 == 0)
    params->device_fns->struct_size = fuzz_size(SP_DEVICE_FNS_STRUCT_SIZE);
}

static void fuzz_get_device_count(const SP_Platform *p, int *count,
                                  TF_Status *st)
{
  real_get_device_count(p, count, st);
  *count = device_count_choice;
}

STUB_EXPORT void SE_InitPlugin(SE_PlatformRegistrationParams *params,
                               TF_Status *status);
STUB_EXPORT void SE_InitPlugin(SE_PlatformRegistrationParams *params,
                               TF_Status *status)
{
  cursor = 0;
  stub_SE_InitPlugin(params, status);
  if (TF_GetCode(status) != TF_OK)
    return;
  SP_Platform *p = params->platform;
  SP_PlatformFns *f = params->platform_fns;
  static const int counts[] = {1, 0, 2, -1, 1, 1, 3, 1};
  device_count_choice = counts[next() % 8];

  real_create_se = f->create_stream_executor;
  real_create_device_fns = f->create_device_fns;
  real_get_device_count = f->get_device_count;
  f->create_stream_executor = fuzz_create_se;
  f->create_device_fns = fuzz_create_device_fns;
  f->get_device_count = fuzz_get_device_count;

  params->struct_size = fuzz_size(SE_PLATFORM_REGISTRATION_PARAMS_STRUCT_SIZE);
  p->struct_size = fuzz_size(SP_PLATFORM_STRUCT_SIZE);
  f->struct_size = fuzz_size(SP_PLATFORM_FNS_STRUCT_SIZE);
  p->name = fuzz_name(p->name);
  p->type = fuzz_name(p->type);
  uint8_t flags = next();
  p->supports_unified_memory = flags & 1;
  p->use_bfc_allocator = (flags >> 1) & 1;
  p->force_memory_growth = (flags >> 2) & 1;
  fuzz_pointers(f, SP_PLATFORM_FNS_STRUCT_SIZE);
  if (next() % 8 == 0)
    params->destroy_platform = NULL;
  if (next() % 8 == 0)
    params->destroy_platform_fns = NULL;
  if (next() % 32 == 0)
    TF_SetStatus(status, TF_INTERNAL, "fuzz: SE_InitPlugin failed");
}
