/* TF_Status of the host shim, plus the small string helpers every module
 * uses to build TensorFlow-style messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim_internal.h"

struct TSL_Status {
  TF_Code code;
  char *message; /* NULL = "" */
};

TF_Status *TF_NewStatus(void) { return calloc(1, sizeof(TF_Status)); }

void TF_DeleteStatus(TF_Status *s)
{
  if (s == NULL)
    return;
  free(s->message);
  free(s);
}

void TF_SetStatus(TF_Status *s, TF_Code code, const char *msg)
{
  char *copy = NULL;

  if (s == NULL)
    return;
  /* Copy first: msg may be TF_Message(s) itself. */
  if (code != TF_OK && msg != NULL && msg[0] != '\0')
    copy = strdup(msg);
  free(s->message);
  s->code = code;
  s->message = copy;
}

TF_Code TF_GetCode(const TF_Status *s) { return s->code; }

const char *TF_Message(const TF_Status *s)
{
  return s->message != NULL ? s->message : "";
}

void shim_set_status(TF_Status *s, TF_Code code, const char *fmt, ...)
{
  va_list ap;
  char *msg = NULL;

  if (s == NULL)
    return;
  va_start(ap, fmt);
  if (vasprintf(&msg, fmt, ap) < 0)
    msg = NULL;
  va_end(ap);
  free(s->message);
  s->code = code;
  s->message = (code == TF_OK) ? (free(msg), NULL) : msg;
}

void shim_set_ok(TF_Status *s) { TF_SetStatus(s, TF_OK, NULL); }

bool shim_ok(const TF_Status *s) { return s->code == TF_OK; }

void shim_copy_status(TF_Status *dst, const TF_Status *src)
{
  if (dst == src)
    return;
  TF_SetStatus(dst, src->code, TF_Message(src));
}

void shim_prefix_status(TF_Status *s, const char *prefix)
{
  if (s->code == TF_OK)
    return;
  shim_set_status(s, s->code, "%s%s", prefix, TF_Message(s));
}

void shim_trace(const char *file, int line, const char *fmt, ...)
{
  static int enabled = -1;
  va_list ap;

  if (enabled < 0) {
    const char *e = getenv("TFOCL_TRACE");
    enabled = e != NULL && strcmp(e, "1") == 0;
  }
  if (!enabled)
    return;
  fprintf(stderr, "tfocl-host %s:%d: ", file, line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

void shim_strbuf_printf(struct shim_strbuf *b, const char *fmt, ...)
{
  va_list ap;
  int n;

  va_start(ap, fmt);
  n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0)
    return;
  if (b->len + (size_t)n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 64;
    char *p;
    while (cap < b->len + (size_t)n + 1)
      cap *= 2;
    p = realloc(b->data, cap);
    if (p == NULL)
      return;
    b->data = p;
    b->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

const char *shim_strbuf_str(const struct shim_strbuf *b)
{
  return b->data != NULL ? b->data : "";
}

void shim_strbuf_finish(struct shim_strbuf *b)
{
  free(b->data);
  *b = (struct shim_strbuf){0};
}
