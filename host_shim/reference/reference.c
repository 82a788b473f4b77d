/* Case building, tensors, comparison and running for the op references;
 * see reference.h. */
#include "reference.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Half precision ------------------------------------------------------ */

static float half_to_float(uint16_t h)
{
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { /* subnormal: normalise */
      int e = -1;
      do {
        e++;
        mant <<= 1;
      } while ((mant & 0x400) == 0);
      bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}

static uint16_t float_to_half(float f)
{
  uint32_t bits;
  memcpy(&bits, &f, sizeof(bits));
  uint16_t sign = (uint16_t)((bits >> 16) & 0x8000);
  uint32_t abs = bits & 0x7fffffffu;
  if (abs >= 0x7f800000u) /* Inf or NaN */
    return sign | 0x7c00 | (abs > 0x7f800000u ? 0x200 : 0);
  if (abs >= 0x477ff000u) /* rounds to >= 65520: overflow */
    return sign | 0x7c00;
  if (abs < 0x38800000u) { /* subnormal half or zero */
    float a;
    memcpy(&a, &abs, sizeof(a));
    /* a * 2^24 is the subnormal mantissa; nearbyint rounds to even. */
    return sign | (uint16_t)nearbyintf(a * 16777216.0f);
  }
  /* Round to nearest even at bit 13. */
  uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);
  return sign | (uint16_t)((rounded - 0x38000000u) >> 13);
}

/* bfloat16: the top half of a float, rounded to nearest even (Eigen's
 * conversion), NaN kept quiet. */
static uint16_t float_to_bfloat16(float f)
{
  uint32_t bits;
  memcpy(&bits, &f, sizeof(bits));
  if (isnan(f))
    return (uint16_t)((bits >> 16) | 0x40u);
  return (uint16_t)((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

static float bfloat16_to_float(uint16_t b)
{
  uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}

double ref_round_to(TF_DataType dtype, double v)
{
  switch (dtype) {
  case TF_FLOAT:
    return (double)(float)v;
  case TF_HALF:
    return half_to_float(float_to_half((float)v));
  case TF_DOUBLE:
    return v;
  case TF_BOOL:
    return v != 0.0;
  case TF_INT32:
    return isnan(v) ? 0 : (double)(int32_t)(int64_t)v;
  case TF_INT64:
    return isnan(v) ? 0 : (double)(int64_t)v;
  case TF_UINT8:
    return isnan(v) ? 0 : (double)(uint8_t)(int64_t)v;
  case TF_INT8:
    return isnan(v) ? 0 : (double)(int8_t)(int64_t)v;
  case TF_INT16:
    return isnan(v) ? 0 : (double)(int16_t)(int64_t)v;
  case TF_UINT16:
    return isnan(v) ? 0 : (double)(uint16_t)(int64_t)v;
  case TF_UINT32:
    return isnan(v) ? 0 : (double)(uint32_t)(int64_t)v;
  case TF_UINT64:
    return isnan(v) ? 0 : v < 0 ? (double)(uint64_t)(int64_t)v : v;
  case TF_BFLOAT16:
    return bfloat16_to_float(float_to_bfloat16((float)v));
  case TF_COMPLEX64:
    return (double)(float)v;
  default:
    return v;
  }
}

int ref_lanes(TF_DataType dtype)
{
  return dtype == TF_COMPLEX64 || dtype == TF_COMPLEX128 ? 2 : 1;
}

/* ---- Tensors --------------------------------------------------------------- */

bool ref_tensor_alloc(struct ref_tensor *t, TF_DataType dtype,
                      const int64_t *dims, int rank)
{
  memset(t, 0, sizeof(*t));
  if (rank < 0 || rank > REF_MAX_DIMS)
    return false;
  t->dtype = dtype;
  t->rank = rank;
  t->elements = 1;
  for (int i = 0; i < rank; i++) {
    t->dims[i] = dims[i];
    t->elements *= dims[i];
  }
  t->v = calloc((size_t)(t->elements > 0 ? t->elements : 1) *
                    (size_t)ref_lanes(dtype),
                sizeof(double));
  return t->v != NULL;
}

void ref_tensor_finish(struct ref_tensor *t)
{
  if (t == NULL)
    return;
  free(t->v);
  t->v = NULL;
}

TF_Tensor *ref_tensor_to_tf(const struct ref_tensor *t, TF_Status *status)
{
  size_t esize = TF_DataTypeSize(t->dtype);
  if (esize == 0) {
    TF_SetStatus(status, TF_INVALID_ARGUMENT,
                 "reference tensors cannot hold this dtype");
    return NULL;
  }
  TF_Tensor *tensor = TF_AllocateTensor(t->dtype, t->dims, t->rank,
                                        (size_t)t->elements * esize);
  if (tensor == NULL) {
    TF_SetStatus(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return NULL;
  }
  void *data = TF_TensorData(tensor);
  if (ref_lanes(t->dtype) == 2) {
    for (int64_t i = 0; i < 2 * t->elements; i++) {
      if (t->dtype == TF_COMPLEX64)
        ((float *)data)[i] = (float)t->v[i];
      else
        ((double *)data)[i] = t->v[i];
    }
    TF_SetStatus(status, TF_OK, "");
    return tensor;
  }
  for (int64_t i = 0; i < t->elements; i++) {
    double v = t->v[i];
    switch (t->dtype) {
    case TF_FLOAT: ((float *)data)[i] = (float)v; break;
    case TF_DOUBLE: ((double *)data)[i] = v; break;
    case TF_HALF: ((uint16_t *)data)[i] = float_to_half((float)v); break;
    case TF_INT32: ((int32_t *)data)[i] = (int32_t)(int64_t)v; break;
    case TF_INT64: ((int64_t *)data)[i] = (int64_t)v; break;
    case TF_BOOL: ((uint8_t *)data)[i] = v != 0.0; break;
    case TF_UINT8: ((uint8_t *)data)[i] = (uint8_t)(int64_t)v; break;
    case TF_INT8: ((int8_t *)data)[i] = (int8_t)(int64_t)v; break;
    case TF_INT16: ((int16_t *)data)[i] = (int16_t)(int64_t)v; break;
    case TF_UINT16: ((uint16_t *)data)[i] = (uint16_t)(int64_t)v; break;
    case TF_BFLOAT16:
      ((uint16_t *)data)[i] = float_to_bfloat16((float)v);
      break;
    case TF_UINT32: ((uint32_t *)data)[i] = (uint32_t)v; break;
    case TF_UINT64: ((uint64_t *)data)[i] = (uint64_t)v; break;
    default:
      TF_DeleteTensor(tensor);
      TF_SetStatus(status, TF_INVALID_ARGUMENT,
                   "reference tensors cannot hold this dtype");
      return NULL;
    }
  }
  TF_SetStatus(status, TF_OK, "");
  return tensor;
}

bool ref_tensor_from_tf(struct ref_tensor *t, const TF_Tensor *tensor)
{
  int rank = TF_NumDims(tensor);
  int64_t dims[REF_MAX_DIMS];
  if (rank > REF_MAX_DIMS)
    return false;
  for (int i = 0; i < rank; i++)
    dims[i] = TF_Dim(tensor, i);
  if (!ref_tensor_alloc(t, TF_TensorType(tensor), dims, rank))
    return false;
  const void *data = TF_TensorData(tensor);
  if (ref_lanes(t->dtype) == 2) {
    for (int64_t i = 0; i < 2 * t->elements; i++)
      t->v[i] = t->dtype == TF_COMPLEX64 ? ((const float *)data)[i]
                                         : ((const double *)data)[i];
    return true;
  }
  for (int64_t i = 0; i < t->elements; i++) {
    switch (t->dtype) {
    case TF_FLOAT: t->v[i] = ((const float *)data)[i]; break;
    case TF_DOUBLE: t->v[i] = ((const double *)data)[i]; break;
    case TF_HALF: t->v[i] = half_to_float(((const uint16_t *)data)[i]); break;
    case TF_INT32: t->v[i] = ((const int32_t *)data)[i]; break;
    case TF_INT64: t->v[i] = (double)((const int64_t *)data)[i]; break;
    case TF_BOOL: t->v[i] = ((const uint8_t *)data)[i] != 0; break;
    case TF_UINT8: t->v[i] = ((const uint8_t *)data)[i]; break;
    case TF_INT8: t->v[i] = ((const int8_t *)data)[i]; break;
    case TF_INT16: t->v[i] = ((const int16_t *)data)[i]; break;
    case TF_UINT16: t->v[i] = ((const uint16_t *)data)[i]; break;
    case TF_BFLOAT16:
      t->v[i] = bfloat16_to_float(((const uint16_t *)data)[i]);
      break;
    case TF_UINT32: t->v[i] = ((const uint32_t *)data)[i]; break;
    case TF_UINT64: t->v[i] = (double)((const uint64_t *)data)[i]; break;
    default:
      ref_tensor_finish(t);
      return false;
    }
  }
  return true;
}

int64_t ref_compare(const struct ref_tensor *got, const struct ref_tensor *want,
                    double rtol, double atol, double *max_error,
                    int64_t *first_bad)
{
  *max_error = 0;
  *first_bad = -1;
  if (got->rank != want->rank)
    return -1;
  for (int i = 0; i < got->rank; i++)
    if (got->dims[i] != want->dims[i])
      return -1;
  int64_t bad = 0;
  int64_t values = got->elements * ref_lanes(got->dtype);
  for (int64_t i = 0; i < values; i++) {
    double g = got->v[i], w = want->v[i];
    bool ok;
    if (isnan(w) || isnan(g)) {
      ok = isnan(w) && isnan(g);
    } else if (isinf(w) || isinf(g)) {
      ok = g == w;
    } else {
      double err = fabs(g - w);
      if (err > *max_error)
        *max_error = err;
      ok = err <= atol + rtol * fabs(w);
    }
    if (!ok) {
      if (*first_bad < 0)
        *first_bad = i;
      bad++;
    }
  }
  return bad;
}

/* ---- Cases ------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *state)
{
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static uint64_t seed_of(const struct ref_case *c)
{
  uint64_t h = 1469598103934665603ull + (uint64_t)c->num_inputs * 7919u;
  for (const char *s = c->op; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  for (const char *s = c->label; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static bool is_float_type(TF_DataType t)
{
  return t == TF_FLOAT || t == TF_HALF || t == TF_DOUBLE || t == TF_BFLOAT16;
}

static double random_value(uint64_t *state, TF_DataType dtype,
                           enum ref_domain domain)
{
  double u = (double)(splitmix64(state) >> 11) / 9007199254740992.0; /* [0,1) */
  if (dtype == TF_BOOL || domain == REF_BOOL)
    return u < 0.5 ? 0.0 : 1.0;
  if (!is_float_type(dtype) && ref_lanes(dtype) == 1) {
    int64_t lo = -10, hi = 10;
    if (domain == REF_POSITIVE)
      lo = 1;
    if (dtype == TF_UINT8 || dtype == TF_UINT16 || dtype == TF_UINT32 ||
        dtype == TF_UINT64)
      lo = lo < 0 ? 0 : lo;
    int64_t v = lo + (int64_t)(u * (double)(hi - lo + 1));
    if (domain == REF_NONZERO && v == 0)
      v = 1;
    return (double)v;
  }
  switch (domain) {
  case REF_POSITIVE:
    return 0.1 + u * 3.9;
  case REF_UNIT:
    return -0.95 + u * 1.9;
  case REF_NONZERO: {
    double v = -3.0 + u * 6.0;
    if (fabs(v) < 0.25)
      v = v < 0 ? v - 0.25 : v + 0.25;
    return v;
  }
  default:
    return -3.0 + u * 6.0;
  }
}

/* Re-points the int-list attributes of cases that moved from `old` (the
 * array's previous address) to `items`. */
static void rebase_arenas(struct ref_case *items, int count, uintptr_t old)
{
  for (int i = 0; i < count; i++) {
    uintptr_t base = old + (uintptr_t)i * sizeof(*items) +
                     offsetof(struct ref_case, ints);
    for (int a = 0; a < items[i].num_attrs; a++) {
      struct tfocl_attr *attr = &items[i].attrs[a];
      uintptr_t p = (uintptr_t)attr->value.ints.items;
      if (attr->kind == TFOCL_ATTR_INT_LIST && p >= base &&
          p < base + sizeof(items[i].ints))
        attr->value.ints.items =
            items[i].ints + (p - base) / sizeof(items[i].ints[0]);
    }
  }
}

struct ref_case *ref_case_add(struct ref_cases *out, const char *op,
                              const char *label_fmt, ...)
{
  if (out->count == out->capacity) {
    int capacity = out->capacity ? out->capacity * 2 : 16;
    /* The old address, as a number: list attributes point into their
     * case's own arena (ref_case_attr_ints) and move with it. */
    uintptr_t old = (uintptr_t)out->items;
    struct ref_case *items = realloc(out->items, sizeof(*items) * (size_t)capacity);
    if (items == NULL)
      abort(); /* test and CLI code only: out of memory is fatal here */
    rebase_arenas(items, out->count, old);
    out->items = items;
    out->capacity = capacity;
  }
  struct ref_case *c = &out->items[out->count++];
  memset(c, 0, sizeof(*c));
  snprintf(c->op, sizeof(c->op), "%s", op);
  va_list ap;
  va_start(ap, label_fmt);
  vsnprintf(c->label, sizeof(c->label), label_fmt, ap);
  va_end(ap);
  c->expect_code = TF_OK;
  return c;
}

struct ref_tensor *ref_case_input_values(struct ref_case *c, TF_DataType dtype,
                                         const int64_t *dims, int rank,
                                         const double *values)
{
  if (c->num_inputs == REF_MAX_TENSORS)
    abort();
  struct ref_tensor *t = &c->inputs[c->num_inputs];
  if (!ref_tensor_alloc(t, dtype, dims, rank))
    abort();
  c->num_inputs++;
  /* A complex input takes two values (real, imaginary) per element. */
  for (int64_t i = 0; i < t->elements * ref_lanes(dtype); i++)
    t->v[i] = values != NULL ? ref_round_to(dtype, values[i]) : 0.0;
  return t;
}

struct ref_tensor *ref_case_input(struct ref_case *c, TF_DataType dtype,
                                  const int64_t *dims, int rank,
                                  enum ref_domain domain)
{
  struct ref_tensor *t = ref_case_input_values(c, dtype, dims, rank, NULL);
  uint64_t state = seed_of(c);
  for (int64_t i = 0; i < t->elements * ref_lanes(dtype); i++)
    t->v[i] = ref_round_to(dtype, random_value(&state, dtype, domain));
  return t;
}

static struct tfocl_attr *new_attr(struct ref_case *c, const char *name,
                                   enum tfocl_attr_kind kind)
{
  if (c->num_attrs == REF_MAX_ATTRS)
    abort();
  struct tfocl_attr *a = &c->attrs[c->num_attrs++];
  memset(a, 0, sizeof(*a));
  /* Attribute names are string literals of the family's case builders. */
  a->name = name;
  a->kind = kind;
  return a;
}

void ref_case_attr_int(struct ref_case *c, const char *name, int64_t v)
{
  new_attr(c, name, TFOCL_ATTR_INT)->value.i = v;
}

void ref_case_attr_float(struct ref_case *c, const char *name, float v)
{
  new_attr(c, name, TFOCL_ATTR_FLOAT)->value.f = v;
}

void ref_case_attr_bool(struct ref_case *c, const char *name, bool v)
{
  new_attr(c, name, TFOCL_ATTR_BOOL)->value.b = v;
}

void ref_case_attr_type(struct ref_case *c, const char *name, TF_DataType v)
{
  new_attr(c, name, TFOCL_ATTR_TYPE)->value.type = v;
}

void ref_case_attr_string(struct ref_case *c, const char *name, const char *v)
{
  new_attr(c, name, TFOCL_ATTR_STRING)->value.s = v;
}

void ref_case_attr_ints(struct ref_case *c, const char *name,
                        const int64_t *v, int count)
{
  if (c->num_ints + count > (int)(sizeof(c->ints) / sizeof(c->ints[0])))
    abort();
  int64_t *items = &c->ints[c->num_ints];
  memcpy(items, v, sizeof(*v) * (size_t)count);
  c->num_ints += count;
  struct tfocl_attr *a = new_attr(c, name, TFOCL_ATTR_INT_LIST);
  a->value.ints.items = items;
  a->value.ints.count = count;
}

void ref_case_attr_shape(struct ref_case *c, const char *name,
                         const int64_t *dims, int rank)
{
  if (c->num_ints + rank > (int)(sizeof(c->ints) / sizeof(c->ints[0])))
    abort();
  int64_t *items = &c->ints[c->num_ints];
  if (rank > 0)
    memcpy(items, dims, sizeof(*dims) * (size_t)rank);
  c->num_ints += rank;
  struct tfocl_attr *a = new_attr(c, name, TFOCL_ATTR_SHAPE);
  a->value.shape.dims = items;
  a->value.shape.num_dims = rank;
}

const struct tfocl_attr *ref_case_attr(const struct ref_case *c,
                                       const char *name)
{
  for (int i = 0; i < c->num_attrs; i++)
    if (strcmp(c->attrs[i].name, name) == 0)
      return &c->attrs[i];
  return NULL;
}

int64_t ref_case_attr_int_or(const struct ref_case *c, const char *name,
                             int64_t fallback)
{
  const struct tfocl_attr *a = ref_case_attr(c, name);
  return a != NULL && a->kind == TFOCL_ATTR_INT ? a->value.i : fallback;
}

double ref_case_attr_float_or(const struct ref_case *c, const char *name,
                              double fallback)
{
  const struct tfocl_attr *a = ref_case_attr(c, name);
  return a != NULL && a->kind == TFOCL_ATTR_FLOAT ? a->value.f : fallback;
}

bool ref_case_attr_bool_or(const struct ref_case *c, const char *name,
                           bool fallback)
{
  const struct tfocl_attr *a = ref_case_attr(c, name);
  return a != NULL && a->kind == TFOCL_ATTR_BOOL ? a->value.b : fallback;
}

const char *ref_case_attr_string_or(const struct ref_case *c, const char *name,
                                    const char *fallback)
{
  const struct tfocl_attr *a = ref_case_attr(c, name);
  return a != NULL && a->kind == TFOCL_ATTR_STRING ? a->value.s : fallback;
}

bool ref_broadcast_shape(const struct ref_tensor *x, const struct ref_tensor *y,
                         int64_t *out_dims, int *out_rank)
{
  int rank = x->rank > y->rank ? x->rank : y->rank;
  for (int i = 0; i < rank; i++) {
    int xi = i - (rank - x->rank), yi = i - (rank - y->rank);
    int64_t xd = xi >= 0 ? x->dims[xi] : 1, yd = yi >= 0 ? y->dims[yi] : 1;
    if (xd != yd && xd != 1 && yd != 1)
      return false;
    out_dims[i] = xd == 1 ? yd : xd;
  }
  *out_rank = rank;
  return true;
}

void ref_broadcast_index(const struct ref_tensor *x, const struct ref_tensor *y,
                         const int64_t *out_dims, int out_rank, int64_t i,
                         int64_t *xi, int64_t *yi)
{
  int64_t x_index = 0, y_index = 0, x_stride = 1, y_stride = 1;
  for (int d = out_rank - 1; d >= 0; d--) {
    int64_t coord = i % out_dims[d];
    i /= out_dims[d];
    int xd = d - (out_rank - x->rank), yd = d - (out_rank - y->rank);
    if (xd >= 0) {
      if (x->dims[xd] != 1)
        x_index += coord * x_stride;
      x_stride *= x->dims[xd];
    }
    if (yd >= 0) {
      if (y->dims[yd] != 1)
        y_index += coord * y_stride;
      y_stride *= y->dims[yd];
    }
  }
  *xi = x_index;
  *yi = y_index;
}

void ref_cases_finish(struct ref_cases *cases)
{
  for (int i = 0; i < cases->count; i++)
    for (int j = 0; j < cases->items[i].num_inputs; j++)
      ref_tensor_finish(&cases->items[i].inputs[j]);
  free(cases->items);
  memset(cases, 0, sizeof(*cases));
}

/* ---- Standard shape sets ----------------------------------------------- */

struct shape {
  int rank;
  int64_t dims[4];
};

static const struct shape unary_shapes[] = {
    {0, {0}},     {1, {1}},       {1, {7}},    {2, {3, 5}},
    {3, {2, 3, 7}}, {1, {1031}}, {1, {0}},   {2, {4, 0}},
};

/* Special values every float op must survive: NaN, infinities, signed
 * zeros, large and tiny magnitudes. */
static const double special_values[] = {
    NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e30, -1e30, 1e-30, 3.5, -2.25,
    0.5, 1.0, -1.0, 100.0, -7.75, 65000.0,
};
#define NUM_SPECIAL (sizeof(special_values) / sizeof(special_values[0]))

void ref_cases_unary(const struct ref_op *op, TF_DataType dtype,
                     struct ref_cases *out)
{
  for (size_t i = 0; i < sizeof(unary_shapes) / sizeof(unary_shapes[0]); i++) {
    const struct shape *s = &unary_shapes[i];
    struct ref_case *c = ref_case_add(out, op->op, "%s shape#%zu", op->op, i);
    ref_case_input(c, dtype, s->dims, s->rank, op->domain);
  }
  if (is_float_type(dtype)) {
    int64_t n = NUM_SPECIAL;
    struct ref_case *c = ref_case_add(out, op->op, "%s special values", op->op);
    ref_case_input_values(c, dtype, &n, 1, special_values);
  }
}

struct shape_pair {
  struct shape x, y;
  TF_Code code;
};

static const struct shape_pair binary_shapes[] = {
    {{2, {3, 5}}, {2, {3, 5}}, TF_OK},
    {{1, {1031}}, {1, {1031}}, TF_OK},
    {{0, {0}}, {2, {3, 5}}, TF_OK},
    {{2, {3, 5}}, {0, {0}}, TF_OK},
    {{0, {0}}, {0, {0}}, TF_OK},
    {{2, {5, 3}}, {1, {3}}, TF_OK},
    {{2, {5, 1}}, {2, {1, 3}}, TF_OK},
    {{3, {2, 3, 4}}, {2, {3, 1}}, TF_OK},
    {{4, {2, 1, 4, 5}}, {3, {3, 1, 1}}, TF_OK},
    {{2, {4, 0}}, {2, {4, 1}}, TF_OK},
    {{2, {2, 3}}, {1, {4}}, TF_INVALID_ARGUMENT},
    /* The broadcast kernels' paths (kernels/binary.c, launch_bcast), with
     * tails of work-groups in each NDRange dimension: an odd channel count
     * past 16 (3-D NDRange, both operands varying innermost), row and
     * NCHW-channel statistics (one operand constant along the innermost
     * dim), both operands broadcast, a row longer than a work-group, and
     * innermost dims under 16 (1-D kernels, either operand full, or
     * neither); on a CPU device's rows (_bcast3d_rows), rows cut into
     * spans, with q varying along them, constant, or on x's side; and
     * rows under 16 whose q repeats (_bcast3d_pattern), on either side;
     * a single element on either side, of rank 0 or not, against 16 or
     * more (on a CPU device one row of _bcast3d_rows, in spans); 4
     * collapsed dims, each operand broadcast in one (on a CPU device a
     * rows launch per index of the first), and with short rows (on a CPU
     * device spans of 512 of the odometer kernel, _bcast_span, one that
     * starts inside a row). */
    {{2, {7, 33}}, {1, {33}}, TF_OK},
    {{3, {3, 5, 17}}, {3, {3, 1, 17}}, TF_OK},
    {{2, {6, 40}}, {2, {6, 1}}, TF_OK},
    {{4, {2, 3, 4, 5}}, {4, {1, 3, 1, 1}}, TF_OK},
    {{2, {19, 1}}, {2, {1, 18}}, TF_OK},
    {{2, {3, 300}}, {2, {3, 1}}, TF_OK},
    {{2, {37, 1}}, {2, {37, 7}}, TF_OK},
    {{3, {2, 5, 3}}, {3, {2, 1, 3}}, TF_OK},
    {{3, {1, 5, 3}}, {3, {4, 1, 3}}, TF_OK},
    {{2, {3, 4099}}, {2, {1, 4099}}, TF_OK},
    {{2, {2, 8200}}, {2, {2, 1}}, TF_OK},
    {{2, {2, 1}}, {2, {2, 4100}}, TF_OK},
    {{2, {1000, 3}}, {1, {3}}, TF_OK},
    {{1, {5}}, {2, {700, 5}}, TF_OK},
    {{2, {3, 7}}, {0, {0}}, TF_OK},
    {{0, {0}}, {1, {5000}}, TF_OK},
    {{2, {1, 1}}, {2, {40, 3}}, TF_OK},
    {{4, {3, 1, 32, 32}}, {4, {3, 16, 1, 32}}, TF_OK},
    {{4, {2, 3, 9, 11}}, {4, {2, 1, 9, 1}}, TF_OK},
};

void ref_cases_binary(const struct ref_op *op, TF_DataType dtype,
                      struct ref_cases *out)
{
  for (size_t i = 0; i < sizeof(binary_shapes) / sizeof(binary_shapes[0]); i++) {
    const struct shape_pair *p = &binary_shapes[i];
    struct ref_case *c = ref_case_add(out, op->op, "%s pair#%zu", op->op, i);
    ref_case_input(c, dtype, p->x.dims, p->x.rank, op->domain);
    /* A different label byte for y so x and y differ. */
    c->label[0] ^= 1;
    ref_case_input(c, dtype, p->y.dims, p->y.rank, op->domain);
    c->label[0] ^= 1;
    c->expect_code = p->code;
  }
  if (is_float_type(dtype)) {
    /* Every special value against every other. */
    int64_t dims[2] = {NUM_SPECIAL, NUM_SPECIAL};
    double x[NUM_SPECIAL * NUM_SPECIAL], y[NUM_SPECIAL * NUM_SPECIAL];
    for (size_t i = 0; i < NUM_SPECIAL; i++)
      for (size_t j = 0; j < NUM_SPECIAL; j++) {
        x[i * NUM_SPECIAL + j] = special_values[i];
        y[i * NUM_SPECIAL + j] = special_values[j];
      }
    struct ref_case *c = ref_case_add(out, op->op, "%s special values", op->op);
    ref_case_input_values(c, dtype, dims, 2, x);
    ref_case_input_values(c, dtype, dims, 2, y);
  }
}

/* ---- Running ------------------------------------------------------------ */

/* The op's own float64 tolerance, where it has one (rtol and atol stay
 * float's otherwise). */
static void double_tolerance(const struct ref_op *op, double *rtol,
                             double *atol)
{
  const struct ref_double_tolerance *d = ref_double_tolerance_find(op->op);
  if (d != NULL) {
    *rtol = d->rtol;
    *atol = d->atol;
  }
}

/* An op with its own check (struct ref_check): all outputs read back,
 * shapes compared with the reference's, then the check judges the values. */
static void check_outputs(const struct ref_op *op,
                          const struct ref_check *check,
                          const struct ref_case *c,
                          TF_Tensor *const *outputs,
                          const struct ref_tensor *want, int num_outputs,
                          struct ref_result *result, TF_Status *status)
{
  struct ref_tensor got[REF_MAX_TENSORS];
  int num_got = 0;
  double rtol = op->rtol, atol = op->atol;
  for (; num_got < num_outputs; num_got++) {
    TF_Tensor *host = tfocl_tensor_to_host(outputs[num_got], status);
    bool ok = host != NULL && ref_tensor_from_tf(&got[num_got], host);
    TF_DeleteTensor(host);
    if (!ok) {
      snprintf(result->message, sizeof(result->message),
               "output %d could not be read back: %s", num_got,
               TF_Message(status));
      result->passed = false;
      goto done;
    }
    bool same = got[num_got].rank == want[num_got].rank;
    for (int d = 0; same && d < got[num_got].rank; d++)
      same = got[num_got].dims[d] == want[num_got].dims[d];
    if (!same) {
      snprintf(result->message, sizeof(result->message),
               "output %d has the wrong shape", num_got);
      result->passed = false;
      result->mismatches++;
      num_got++;
      goto done;
    }
    if (got[num_got].dtype == TF_HALF && (op->rtol != 0 || op->atol != 0)) {
      rtol = op->rtol * REF_HALF_FACTOR + 1e-3;
      atol = op->atol * REF_HALF_FACTOR + 1e-3;
    } else if (got[num_got].dtype == TF_DOUBLE) {
      double_tolerance(op, &rtol, &atol);
    }
  }
  result->mismatches = check->check(c, got, want, num_outputs, rtol, atol,
                                 &result->max_error, result->message,
                                 (int)sizeof(result->message));
  result->passed = result->mismatches == 0;
done:
  for (int i = 0; i < num_got; i++)
    ref_tensor_finish(&got[i]);
}

void ref_run_case(struct tfocl_device *device, const struct ref_op *op,
                  const struct ref_case *c, struct ref_result *result)
{
  TF_Status *status = TF_NewStatus();
  TF_Tensor *inputs[REF_MAX_TENSORS] = {NULL};
  TF_Tensor *outputs[REF_MAX_TENSORS] = {NULL};
  struct ref_tensor want[REF_MAX_TENSORS];
  int num_outputs = 0, num_want = 0;

  memset(result, 0, sizeof(*result));
  memset(want, 0, sizeof(want));
  for (int i = 0; i < c->num_inputs; i++) {
    inputs[i] = ref_tensor_to_tf(&c->inputs[i], status);
    if (inputs[i] == NULL)
      goto done;
  }

  tfocl_run_op(device, c->op, c->attrs, c->num_attrs, inputs, c->num_inputs,
               outputs, REF_MAX_TENSORS, &num_outputs, status);
  result->code = TF_GetCode(status);
  snprintf(result->message, sizeof(result->message), "%s", TF_Message(status));
  if (c->expect_code != TF_OK || result->code != TF_OK) {
    result->passed = result->code == c->expect_code;
    if (!result->passed && c->expect_code != TF_OK)
      snprintf(result->message, sizeof(result->message),
               "expected code %d, got %d (%s)", c->expect_code, result->code,
               TF_Message(status));
    goto done;
  }
  result->num_outputs = num_outputs;

  char error[256] = "";
  num_want = op->compute(c, want, error, sizeof(error));
  if (num_want < 0) {
    snprintf(result->message, sizeof(result->message),
             "the device accepted a case the reference rejects: %s", error);
    goto done;
  }
  if (num_want != num_outputs) {
    snprintf(result->message, sizeof(result->message),
             "%d outputs, the reference gives %d", num_outputs, num_want);
    goto done;
  }

  result->passed = true;
  const struct ref_check *check = ref_check_find(c->op);
  if (check != NULL) {
    check_outputs(op, check, c, outputs, want, num_outputs, result, status);
    goto done;
  }
  for (int i = 0; i < num_outputs; i++) {
    TF_Tensor *host = tfocl_tensor_to_host(outputs[i], status);
    struct ref_tensor got;
    if (host == NULL || !ref_tensor_from_tf(&got, host)) {
      snprintf(result->message, sizeof(result->message),
               "output %d could not be read back: %s", i, TF_Message(status));
      TF_DeleteTensor(host);
      result->passed = false;
      goto done;
    }
    TF_DeleteTensor(host);
    double rtol = op->rtol, atol = op->atol;
    /* An exact op's half result is its value rounded once, to nearest
     * even, as the reference rounds it: no widening. */
    bool exact = op->rtol == 0 && op->atol == 0;
    if (got.dtype == TF_HALF && !exact) {
      rtol = rtol * REF_HALF_FACTOR + 1e-3;
      atol = atol * REF_HALF_FACTOR + 1e-3;
    } else if (got.dtype == TF_BFLOAT16) {
      /* 8 significant bits to half's 11: one rounding is 2^-8 relative. */
      rtol = rtol * REF_HALF_FACTOR + 8e-3;
      atol = atol * REF_HALF_FACTOR + 8e-3;
    } else if (got.dtype == TF_DOUBLE) {
      double_tolerance(op, &rtol, &atol);
    }
    double max_error = 0;
    int64_t first_bad = -1;
    int64_t bad;
    if (isinf(op->atol)) {
      /* Values unspecified: the shape alone must match. */
      struct ref_tensor shape_of_got = got;
      shape_of_got.v = want[i].v;
      bad = ref_compare(&shape_of_got, &want[i], 0, 0, &max_error, &first_bad);
    } else {
      bad = ref_compare(&got, &want[i], rtol, atol, &max_error, &first_bad);
    }
    if (max_error > result->max_error)
      result->max_error = max_error;
    if (bad != 0) {
      result->passed = false;
      result->mismatches += bad < 0 ? 1 : bad;
      if (bad < 0)
        snprintf(result->message, sizeof(result->message),
                 "output %d has the wrong shape (rank %d, reference rank %d)",
                 i, got.rank, want[i].rank);
      else {
        /* Enough digits to tell a double's ulps apart. */
        int digits = got.dtype == TF_DOUBLE ? 17 : 9;
        snprintf(result->message, sizeof(result->message),
                 "output %d: %lld of %lld elements off; first at %lld: got "
                 "%.*g, want %.*g",
                 i, (long long)bad, (long long)got.elements,
                 (long long)first_bad, digits, got.v[first_bad], digits,
                 want[i].v[first_bad]);
      }
    }
    ref_tensor_finish(&got);
  }

done:
  for (int i = 0; i < num_want; i++)
    ref_tensor_finish(&want[i]);
  for (int i = 0; i < REF_MAX_TENSORS; i++) {
    TF_DeleteTensor(inputs[i]);
    TF_DeleteTensor(outputs[i]);
  }
  TF_DeleteStatus(status);
}

bool ref_on_oclgrind(void)
{
  const char *device = getenv("TFOCL_OPS_DEVICE");
  return device != NULL && strstr(device, "Oclgrind") != NULL;
}

bool ref_op_selected(const char *op)
{
  const char *filter = getenv("TFOCL_OPS_FILTER");
  if (filter == NULL || *filter == '\0')
    return true;
  size_t len = strlen(op);
  for (const char *p = filter; *p;) {
    const char *end = strchr(p, ',');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if (n == len && strncmp(p, op, n) == 0)
      return true;
    p += n + (end ? 1 : 0);
  }
  return false;
}
