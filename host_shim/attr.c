/* Owned attribute values: deep copies of the borrowed tfocl_attr arrays,
 * and TensorFlow's way of printing them in messages. */
#include <stdlib.h>
#include <string.h>

#include "shim_internal.h"

static const char *const kind_names[] = {
    [TFOCL_ATTR_INT] = "int",
    [TFOCL_ATTR_FLOAT] = "float",
    [TFOCL_ATTR_BOOL] = "bool",
    [TFOCL_ATTR_TYPE] = "type",
    [TFOCL_ATTR_STRING] = "string",
    [TFOCL_ATTR_SHAPE] = "shape",
    [TFOCL_ATTR_INT_LIST] = "list(int)",
    [TFOCL_ATTR_FLOAT_LIST] = "list(float)",
    [TFOCL_ATTR_BOOL_LIST] = "list(bool)",
    [TFOCL_ATTR_TYPE_LIST] = "list(type)",
    [TFOCL_ATTR_STRING_LIST] = "list(string)",
    [TFOCL_ATTR_SHAPE_LIST] = "list(shape)",
};

const char *shim_attr_kind_name(enum tfocl_attr_kind kind)
{
  if ((unsigned)kind >= sizeof(kind_names) / sizeof(kind_names[0]))
    return "unknown";
  return kind_names[kind];
}

bool shim_attr_kind_is_list(enum tfocl_attr_kind kind)
{
  return kind >= TFOCL_ATTR_INT_LIST;
}

static size_t list_item_size(enum tfocl_attr_kind kind)
{
  switch (kind) {
  case TFOCL_ATTR_INT_LIST:
    return sizeof(int64_t);
  case TFOCL_ATTR_FLOAT_LIST:
    return sizeof(float);
  case TFOCL_ATTR_BOOL_LIST:
    return sizeof(bool);
  case TFOCL_ATTR_TYPE_LIST:
    return sizeof(TF_DataType);
  case TFOCL_ATTR_STRING_LIST:
    return sizeof(char *);
  case TFOCL_ATTR_SHAPE_LIST:
    return sizeof(struct tfocl_shape);
  default:
    return 0;
  }
}

static bool copy_dims(const int64_t *dims, int num_dims, int64_t **out)
{
  *out = NULL;
  if (num_dims <= 0)
    return true;
  *out = malloc(sizeof(int64_t) * (size_t)num_dims);
  if (*out == NULL)
    return false;
  memcpy(*out, dims, sizeof(int64_t) * (size_t)num_dims);
  return true;
}

/* Copies a list whose items are laid out as in the public struct; strings
 * and shapes are deep-copied (shape items keep the public struct layout with
 * owned dims). */
static bool copy_list(enum tfocl_attr_kind kind, const void *items, int count,
                      struct shim_attr_value *out)
{
  size_t sz = list_item_size(kind);

  out->v.list.count = 0;
  out->v.list.items = NULL;
  if (count <= 0)
    return true;
  out->v.list.items = calloc((size_t)count, sz);
  if (out->v.list.items == NULL)
    return false;
  if (kind == TFOCL_ATTR_STRING_LIST) {
    char **dst = out->v.list.items;
    const char *const *src = items;
    for (int i = 0; i < count; i++) {
      dst[i] = strdup(src[i] != NULL ? src[i] : "");
      out->v.list.count = i + 1;
      if (dst[i] == NULL)
        return false;
    }
  } else if (kind == TFOCL_ATTR_SHAPE_LIST) {
    struct tfocl_shape *dst = out->v.list.items;
    const struct tfocl_shape *src = items;
    for (int i = 0; i < count; i++) {
      int64_t *d;
      dst[i].num_dims = src[i].num_dims;
      out->v.list.count = i + 1;
      if (!copy_dims(src[i].dims, src[i].num_dims, &d))
        return false;
      dst[i].dims = d;
    }
  } else {
    memcpy(out->v.list.items, items, sz * (size_t)count);
  }
  out->v.list.count = count;
  return true;
}

bool shim_attr_value_from_public(const struct tfocl_attr *a,
                                 struct shim_attr_value *out)
{
  *out = (struct shim_attr_value){.kind = a->kind};
  switch (a->kind) {
  case TFOCL_ATTR_INT:
    out->v.i = a->value.i;
    return true;
  case TFOCL_ATTR_FLOAT:
    out->v.f = a->value.f;
    return true;
  case TFOCL_ATTR_BOOL:
    out->v.b = a->value.b;
    return true;
  case TFOCL_ATTR_TYPE:
    out->v.type = a->value.type;
    return true;
  case TFOCL_ATTR_STRING:
    out->v.s = strdup(a->value.s != NULL ? a->value.s : "");
    return out->v.s != NULL;
  case TFOCL_ATTR_SHAPE:
    out->v.shape.num_dims = a->value.shape.num_dims;
    return copy_dims(a->value.shape.dims, a->value.shape.num_dims,
                     &out->v.shape.dims);
  case TFOCL_ATTR_INT_LIST:
    return copy_list(a->kind, a->value.ints.items, a->value.ints.count, out);
  case TFOCL_ATTR_FLOAT_LIST:
    return copy_list(a->kind, a->value.floats.items, a->value.floats.count,
                     out);
  case TFOCL_ATTR_BOOL_LIST:
    return copy_list(a->kind, a->value.bools.items, a->value.bools.count,
                     out);
  case TFOCL_ATTR_TYPE_LIST:
    return copy_list(a->kind, a->value.types.items, a->value.types.count,
                     out);
  case TFOCL_ATTR_STRING_LIST:
    return copy_list(a->kind, a->value.strings.items, a->value.strings.count,
                     out);
  case TFOCL_ATTR_SHAPE_LIST:
    return copy_list(a->kind, a->value.shapes.items, a->value.shapes.count,
                     out);
  }
  return false;
}

bool shim_attr_value_copy(const struct shim_attr_value *src,
                          struct shim_attr_value *dst)
{
  *dst = *src;
  if (src->kind == TFOCL_ATTR_STRING) {
    dst->v.s = strdup(src->v.s);
    return dst->v.s != NULL;
  }
  if (src->kind == TFOCL_ATTR_SHAPE)
    return copy_dims(src->v.shape.dims, src->v.shape.num_dims,
                     &dst->v.shape.dims);
  if (shim_attr_kind_is_list(src->kind))
    return copy_list(src->kind, src->v.list.items, src->v.list.count, dst);
  return true;
}

void shim_attr_value_finish(struct shim_attr_value *v)
{
  if (v->kind == TFOCL_ATTR_STRING) {
    free(v->v.s);
  } else if (v->kind == TFOCL_ATTR_SHAPE) {
    free(v->v.shape.dims);
  } else if (shim_attr_kind_is_list(v->kind)) {
    if (v->kind == TFOCL_ATTR_STRING_LIST) {
      char **s = v->v.list.items;
      for (int i = 0; i < v->v.list.count; i++)
        free(s[i]);
    } else if (v->kind == TFOCL_ATTR_SHAPE_LIST) {
      struct tfocl_shape *s = v->v.list.items;
      for (int i = 0; i < v->v.list.count; i++)
        free((void *)s[i].dims);
    }
    free(v->v.list.items);
  }
  *v = (struct shim_attr_value){.kind = v->kind};
}

void shim_attrs_free(struct shim_attr *attrs, int n)
{
  if (attrs == NULL)
    return;
  for (int i = 0; i < n; i++) {
    free(attrs[i].name);
    shim_attr_value_finish(&attrs[i].value);
  }
  free(attrs);
}

static void format_shape(struct shim_strbuf *b, const int64_t *dims,
                         int num_dims)
{
  if (num_dims < 0) {
    shim_strbuf_printf(b, "<unknown>");
    return;
  }
  shim_format_shape(b, dims, num_dims);
}

void shim_attr_value_format(struct shim_strbuf *b,
                            const struct shim_attr_value *v)
{
  const struct shim_attr_value *x = v;

  switch (x->kind) {
  case TFOCL_ATTR_INT:
    shim_strbuf_printf(b, "%lld", (long long)x->v.i);
    return;
  case TFOCL_ATTR_FLOAT:
    shim_strbuf_printf(b, "%g", (double)x->v.f);
    return;
  case TFOCL_ATTR_BOOL:
    shim_strbuf_printf(b, "%s", x->v.b ? "true" : "false");
    return;
  case TFOCL_ATTR_TYPE:
    shim_strbuf_printf(b, "%s", tfocl_type_name(x->v.type));
    return;
  case TFOCL_ATTR_STRING:
    shim_strbuf_printf(b, "\"%s\"", x->v.s);
    return;
  case TFOCL_ATTR_SHAPE:
    format_shape(b, x->v.shape.dims, x->v.shape.num_dims);
    return;
  default:
    break;
  }
  shim_strbuf_printf(b, "[");
  for (int i = 0; i < x->v.list.count; i++) {
    if (i > 0)
      shim_strbuf_printf(b, ", ");
    switch (x->kind) {
    case TFOCL_ATTR_INT_LIST:
      shim_strbuf_printf(b, "%lld",
                         (long long)((int64_t *)x->v.list.items)[i]);
      break;
    case TFOCL_ATTR_FLOAT_LIST:
      shim_strbuf_printf(b, "%g", (double)((float *)x->v.list.items)[i]);
      break;
    case TFOCL_ATTR_BOOL_LIST:
      shim_strbuf_printf(b, "%s",
                         ((bool *)x->v.list.items)[i] ? "true" : "false");
      break;
    case TFOCL_ATTR_TYPE_LIST:
      shim_strbuf_printf(b, "%s",
                         tfocl_type_name(((TF_DataType *)x->v.list.items)[i]));
      break;
    case TFOCL_ATTR_STRING_LIST:
      shim_strbuf_printf(b, "\"%s\"", ((char **)x->v.list.items)[i]);
      break;
    case TFOCL_ATTR_SHAPE_LIST: {
      const struct tfocl_shape *s = &((struct tfocl_shape *)x->v.list.items)[i];
      format_shape(b, s->dims, s->num_dims);
      break;
    }
    default:
      break;
    }
  }
  shim_strbuf_printf(b, "]");
}
