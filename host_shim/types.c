/* Data type names and sizes, spelled as TensorFlow spells them. */
#include <string.h>
#include <strings.h>

#include "shim_internal.h"

struct type_row {
  TF_DataType dtype;
  const char *enum_name;  /* DT_FLOAT */
  const char *short_name; /* float (DataTypeString) */
  const char *alias;      /* f32, NULL if none */
  size_t size;
};

static const struct type_row type_rows[] = {
    {TF_FLOAT, "DT_FLOAT", "float", "f32", 4},
    {TF_DOUBLE, "DT_DOUBLE", "double", "f64", 8},
    {TF_INT32, "DT_INT32", "int32", "i32", 4},
    {TF_UINT8, "DT_UINT8", "uint8", "u8", 1},
    {TF_INT16, "DT_INT16", "int16", "i16", 2},
    {TF_INT8, "DT_INT8", "int8", "i8", 1},
    {TF_STRING, "DT_STRING", "string", NULL, 0},
    {TF_COMPLEX64, "DT_COMPLEX64", "complex64", "c64", 8},
    {TF_INT64, "DT_INT64", "int64", "i64", 8},
    {TF_BOOL, "DT_BOOL", "bool", NULL, 1},
    {TF_QINT8, "DT_QINT8", "qint8", NULL, 1},
    {TF_QUINT8, "DT_QUINT8", "quint8", NULL, 1},
    {TF_QINT32, "DT_QINT32", "qint32", NULL, 4},
    {TF_BFLOAT16, "DT_BFLOAT16", "bfloat16", "bf16", 2},
    {TF_QINT16, "DT_QINT16", "qint16", NULL, 2},
    {TF_QUINT16, "DT_QUINT16", "quint16", NULL, 2},
    {TF_UINT16, "DT_UINT16", "uint16", "u16", 2},
    {TF_COMPLEX128, "DT_COMPLEX128", "complex128", "c128", 16},
    {TF_HALF, "DT_HALF", "half", "f16", 2},
    {TF_RESOURCE, "DT_RESOURCE", "resource", NULL, 0},
    {TF_VARIANT, "DT_VARIANT", "variant", NULL, 0},
    {TF_UINT32, "DT_UINT32", "uint32", "u32", 4},
    {TF_UINT64, "DT_UINT64", "uint64", "u64", 8},
    {TF_FLOAT8_E5M2, "DT_FLOAT8_E5M2", "float8_e5m2", NULL, 1},
    {TF_FLOAT8_E4M3FN, "DT_FLOAT8_E4M3FN", "float8_e4m3fn", NULL, 1},
    {TF_FLOAT8_E4M3FNUZ, "DT_FLOAT8_E4M3FNUZ", "float8_e4m3fnuz", NULL, 1},
    {TF_FLOAT8_E4M3B11FNUZ, "DT_FLOAT8_E4M3B11FNUZ", "float8_e4m3b11fnuz",
     NULL, 1},
    {TF_FLOAT8_E5M2FNUZ, "DT_FLOAT8_E5M2FNUZ", "float8_e5m2fnuz", NULL, 1},
    {TF_INT4, "DT_INT4", "int4", NULL, 0},
    {TF_UINT4, "DT_UINT4", "uint4", NULL, 0},
};

static const struct type_row *find_row(TF_DataType dtype)
{
  for (size_t i = 0; i < sizeof(type_rows) / sizeof(type_rows[0]); i++)
    if (type_rows[i].dtype == dtype)
      return &type_rows[i];
  return NULL;
}

size_t TF_DataTypeSize(TF_DataType dt)
{
  const struct type_row *r = find_row(dt);
  return r != NULL ? r->size : 0;
}

const char *tfocl_type_name(TF_DataType dtype)
{
  const struct type_row *r = find_row(dtype);
  return r != NULL ? r->enum_name : "DT_INVALID";
}

const char *shim_type_short_name(TF_DataType dtype)
{
  const struct type_row *r = find_row(dtype);
  return r != NULL ? r->short_name : "unknown";
}

bool tfocl_type_from_name(const char *name, TF_DataType *dtype)
{
  if (name == NULL)
    return false;
  for (size_t i = 0; i < sizeof(type_rows) / sizeof(type_rows[0]); i++) {
    const struct type_row *r = &type_rows[i];
    if (strcasecmp(name, r->enum_name) == 0 ||
        strcmp(name, r->short_name) == 0 ||
        (r->alias != NULL && strcmp(name, r->alias) == 0)) {
      *dtype = r->dtype;
      return true;
    }
  }
  return false;
}
