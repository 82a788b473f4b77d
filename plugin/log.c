/* tfocl plugin: env-gated tracing and the one "unusable" line. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl.h"

static pthread_once_t report_once = PTHREAD_ONCE_INIT;
static char report_line[512];

bool ocl_trace_enabled(void) { return ocl_config()->trace; }

void ocl_trace_printf(const char *file, int line, const char *fmt, ...) {
  char message[1024];
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  fprintf(stderr, "tfocl %s:%d: %s\n", file, line, message);
}

static void print_report(void) {
  fprintf(stderr, "tfocl: %s\n", report_line);
}

void ocl_report_unusable(const char *fmt, ...) {
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  va_list ap;

  /* The first reason wins; the line is printed once per process. */
  pthread_mutex_lock(&lock);
  if (!report_line[0]) {
    va_start(ap, fmt);
    vsnprintf(report_line, sizeof report_line, fmt, ap);
    va_end(ap);
  }
  pthread_mutex_unlock(&lock);
  pthread_once(&report_once, print_report);
}
