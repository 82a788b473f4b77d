/* tfocl plugin: timers. Still in the ABI, never called by TensorFlow since
 * XLA dropped Timer, but ~CPlatform always calls destroy_timer_fns. */
#include "ocl.h"

static uint64_t timer_nanoseconds(SP_Timer timer) {
  (void)timer;
  return 0;
}

void ocl_create_timer_fns(const SP_Platform *platform, SP_TimerFns *timer_fns,
                          TF_Status *status) {
  SP_TimerFns fns = {.struct_size = SP_TIMER_FNS_STRUCT_SIZE,
                     .ext = NULL,
                     .nanoseconds = timer_nanoseconds};
  (void)platform;
  ocl_set_ok(status);
  if (timer_fns) ocl_fill_struct(timer_fns, &fns, SP_TIMER_FNS_STRUCT_SIZE);
}

void ocl_destroy_timer_fns(const SP_Platform *platform,
                           SP_TimerFns *timer_fns) {
  (void)platform;
  (void)timer_fns; /* nothing allocated */
}

void ocl_create_timer(const SP_Device *device, SP_Timer *timer,
                      TF_Status *status) {
  (void)device;
  if (timer) *timer = NULL;
  ocl_set_status(status, TF_UNIMPLEMENTED, "tfocl has no timers");
}

void ocl_destroy_timer(const SP_Device *device, SP_Timer timer) {
  (void)device;
  (void)timer;
}

void ocl_start_timer(const SP_Device *device, SP_Stream stream, SP_Timer timer,
                     TF_Status *status) {
  (void)device;
  (void)stream;
  (void)timer;
  ocl_set_status(status, TF_UNIMPLEMENTED, "tfocl has no timers");
}

void ocl_stop_timer(const SP_Device *device, SP_Stream stream, SP_Timer timer,
                    TF_Status *status) {
  (void)device;
  (void)stream;
  (void)timer;
  ocl_set_status(status, TF_UNIMPLEMENTED, "tfocl has no timers");
}
