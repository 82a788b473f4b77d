/* TF_Status of the host shim. */
#include <stdlib.h>
#include <string.h>

#include "tensorflow/c/tf_status.h"

struct TSL_Status {
  TF_Code code;
  char *message;
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
  s->code = code;
  free(s->message);
  s->message = (code == TF_OK || msg == NULL) ? NULL : strdup(msg);
}

TF_Code TF_GetCode(const TF_Status *s) { return s->code; }

const char *TF_Message(const TF_Status *s)
{
  return s->message != NULL ? s->message : "";
}
