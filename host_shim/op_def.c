/* Op definitions in TensorFlow's REGISTER_OP notation, and the node
 * completion TensorFlow does before kernel lookup: attributes inferred from
 * input types, defaults, allowed values, output types. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim_internal.h"

static pthread_mutex_t op_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;
static struct shim_op_def **op_defs;
static int num_op_defs;

/* ---- parsing ------------------------------------------------------------ */

static char *trim_dup(const char *s, size_t n)
{
  char *out;
  while (n > 0 && isspace((unsigned char)*s)) {
    s++;
    n--;
  }
  while (n > 0 && isspace((unsigned char)s[n - 1]))
    n--;
  out = malloc(n + 1);
  if (out != NULL) {
    memcpy(out, s, n);
    out[n] = '\0';
  }
  return out;
}

/* Splits at commas outside (), [], {} and quotes. Returns the count or -1. */
static int split_top(const char *s, char ***out)
{
  char **items = NULL;
  int n = 0, depth = 0;
  char quote = 0;
  const char *start = s;

  *out = NULL;
  if (s == NULL)
    return 0;
  for (const char *c = s;; c++) {
    if (quote) {
      if (*c == '\0')
        goto fail;
      if (*c == quote)
        quote = 0;
      continue;
    }
    if (*c == '\'' || *c == '"')
      quote = *c;
    else if (*c == '(' || *c == '[' || *c == '{')
      depth++;
    else if (*c == ')' || *c == ']' || *c == '}')
      depth--;
    if ((*c == ',' && depth == 0) || *c == '\0') {
      char *item = trim_dup(start, (size_t)(c - start));
      char **v;
      if (item == NULL)
        goto fail;
      if (item[0] == '\0') {
        free(item);
        /* "" is an empty list; "a,,b" or "a," is malformed. */
        if (*c == '\0' && n == 0)
          break;
        goto fail;
      }
      v = realloc(items, sizeof(*v) * (size_t)(n + 1));
      if (v == NULL) {
        free(item);
        goto fail;
      }
      items = v;
      items[n++] = item;
      start = c + 1;
    }
    if (*c == '\0')
      break;
  }
  if (depth != 0)
    goto fail;
  *out = items;
  return n;

fail:
  for (int i = 0; i < n; i++)
    free(items[i]);
  free(items);
  return -1;
}

static void free_split(char **items, int n)
{
  for (int i = 0; i < n; i++)
    free(items[i]);
  free(items);
}

static bool is_ident(const char *s)
{
  if (!isalpha((unsigned char)*s) && *s != '_')
    return false;
  for (s++; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_')
      return false;
  return true;
}

static bool parse_kind(const char *s, enum tfocl_attr_kind *kind)
{
  static const struct {
    const char *name;
    enum tfocl_attr_kind kind;
  } kinds[] = {
      {"int", TFOCL_ATTR_INT},
      {"float", TFOCL_ATTR_FLOAT},
      {"bool", TFOCL_ATTR_BOOL},
      {"type", TFOCL_ATTR_TYPE},
      {"string", TFOCL_ATTR_STRING},
      {"shape", TFOCL_ATTR_SHAPE},
      {"list(int)", TFOCL_ATTR_INT_LIST},
      {"list(float)", TFOCL_ATTR_FLOAT_LIST},
      {"list(bool)", TFOCL_ATTR_BOOL_LIST},
      {"list(type)", TFOCL_ATTR_TYPE_LIST},
      {"list(string)", TFOCL_ATTR_STRING_LIST},
      {"list(shape)", TFOCL_ATTR_SHAPE_LIST},
  };
  for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
    if (strcmp(s, kinds[i].name) == 0) {
      *kind = kinds[i].kind;
      return true;
    }
  }
  return false;
}

static bool parse_int(const char *s, int64_t *v)
{
  char *end;
  errno = 0;
  *v = strtoll(s, &end, 10);
  return errno == 0 && end != s && *end == '\0';
}

/* "{float, half}" -> allowed types */
static bool parse_type_set(const char *s, TF_DataType **types, int *count)
{
  size_t n = strlen(s);
  char *inner, **items;
  int k;

  if (n < 2 || s[0] != '{' || s[n - 1] != '}')
    return false;
  inner = trim_dup(s + 1, n - 2);
  if (inner == NULL)
    return false;
  k = split_top(inner, &items);
  free(inner);
  if (k <= 0)
    return false;
  *types = calloc((size_t)k, sizeof(TF_DataType));
  if (*types == NULL) {
    free_split(items, k);
    return false;
  }
  for (int i = 0; i < k; i++) {
    if (!tfocl_type_from_name(items[i], &(*types)[i])) {
      free_split(items, k);
      free(*types);
      *types = NULL;
      return false;
    }
  }
  *count = k;
  free_split(items, k);
  return true;
}

static bool parse_scalar(enum tfocl_attr_kind kind, const char *s,
                         struct shim_attr_value *v)
{
  size_t n = strlen(s);
  char *end;

  v->kind = kind;
  switch (kind) {
  case TFOCL_ATTR_INT:
    return parse_int(s, &v->v.i);
  case TFOCL_ATTR_FLOAT:
    v->v.f = strtof(s, &end);
    return end != s && *end == '\0';
  case TFOCL_ATTR_BOOL:
    if (strcmp(s, "true") == 0 || strcmp(s, "false") == 0) {
      v->v.b = s[0] == 't';
      return true;
    }
    return false;
  case TFOCL_ATTR_TYPE:
    return tfocl_type_from_name(s, &v->v.type);
  case TFOCL_ATTR_STRING:
    if (n < 2 || (s[0] != '\'' && s[0] != '"') || s[n - 1] != s[0])
      return false;
    v->v.s = trim_dup(s + 1, n - 2);
    return v->v.s != NULL;
  default:
    return false;
  }
}

static bool parse_default(enum tfocl_attr_kind kind, const char *s,
                          struct shim_attr_value *v)
{
  size_t n = strlen(s);
  char *inner, **items;
  int k;
  bool ok = true;
  enum tfocl_attr_kind item_kind;

  *v = (struct shim_attr_value){.kind = kind};
  if (kind == TFOCL_ATTR_SHAPE || kind == TFOCL_ATTR_SHAPE_LIST) {
    /* "[2, 3]" for a shape; lists of shapes only as "[]". */
    if (n < 2 || s[0] != '[' || s[n - 1] != ']')
      return false;
    inner = trim_dup(s + 1, n - 2);
    if (inner == NULL)
      return false;
    k = split_top(inner, &items);
    free(inner);
    if (k < 0 || (kind == TFOCL_ATTR_SHAPE_LIST && k > 0)) {
      free_split(items, k > 0 ? k : 0);
      return false;
    }
    if (kind == TFOCL_ATTR_SHAPE && k > 0) {
      v->v.shape.dims = calloc((size_t)k, sizeof(int64_t));
      ok = v->v.shape.dims != NULL;
      for (int i = 0; ok && i < k; i++)
        ok = parse_int(items[i], &v->v.shape.dims[i]);
      v->v.shape.num_dims = k;
    }
    free_split(items, k);
    return ok;
  }
  if (!shim_attr_kind_is_list(kind))
    return parse_scalar(kind, s, v);
  if (n < 2 || s[0] != '[' || s[n - 1] != ']')
    return false;
  inner = trim_dup(s + 1, n - 2);
  if (inner == NULL)
    return false;
  k = split_top(inner, &items);
  free(inner);
  if (k < 0)
    return false;
  item_kind = (enum tfocl_attr_kind)(kind - TFOCL_ATTR_INT_LIST);
  /* list kinds follow their scalar kinds in the same order, shape aside */
  if (kind == TFOCL_ATTR_TYPE_LIST)
    item_kind = TFOCL_ATTR_TYPE;
  else if (kind == TFOCL_ATTR_STRING_LIST)
    item_kind = TFOCL_ATTR_STRING;
  if (k > 0) {
    size_t sz = kind == TFOCL_ATTR_INT_LIST     ? sizeof(int64_t)
                : kind == TFOCL_ATTR_FLOAT_LIST ? sizeof(float)
                : kind == TFOCL_ATTR_BOOL_LIST  ? sizeof(bool)
                : kind == TFOCL_ATTR_TYPE_LIST  ? sizeof(TF_DataType)
                                                : sizeof(char *);
    v->v.list.items = calloc((size_t)k, sz);
    ok = v->v.list.items != NULL;
  }
  for (int i = 0; ok && i < k; i++) {
    struct shim_attr_value item = {0};
    ok = parse_scalar(item_kind, items[i], &item);
    if (!ok)
      break;
    v->v.list.count = i + 1;
    switch (kind) {
    case TFOCL_ATTR_INT_LIST:
      ((int64_t *)v->v.list.items)[i] = item.v.i;
      break;
    case TFOCL_ATTR_FLOAT_LIST:
      ((float *)v->v.list.items)[i] = item.v.f;
      break;
    case TFOCL_ATTR_BOOL_LIST:
      ((bool *)v->v.list.items)[i] = item.v.b;
      break;
    case TFOCL_ATTR_TYPE_LIST:
      ((TF_DataType *)v->v.list.items)[i] = item.v.type;
      break;
    default:
      ((char **)v->v.list.items)[i] = item.v.s;
      break;
    }
  }
  free_split(items, k);
  return ok;
}

static void op_def_free(struct shim_op_def *def)
{
  if (def == NULL)
    return;
  for (int pass = 0; pass < 2; pass++) {
    struct shim_arg_def *args = pass ? def->outputs : def->inputs;
    int n = pass ? def->num_outputs : def->num_inputs;
    for (int i = 0; i < n; i++) {
      free(args[i].name);
      free(args[i].type_attr);
      free(args[i].number_attr);
      free(args[i].type_list_attr);
    }
    free(args);
  }
  for (int i = 0; i < def->num_attrs; i++) {
    free(def->attrs[i].name);
    free(def->attrs[i].allowed);
    if (def->attrs[i].has_default)
      shim_attr_value_finish(&def->attrs[i].def);
  }
  free(def->attrs);
  free(def->name);
  free(def->signature);
  free(def);
}

const struct shim_attr_def *shim_op_def_attr(const struct shim_op_def *def,
                                             const char *name)
{
  for (int i = 0; i < def->num_attrs; i++)
    if (strcmp(def->attrs[i].name, name) == 0)
      return &def->attrs[i];
  return NULL;
}

static bool parse_attrs(struct shim_op_def *def, const char *spec,
                        TF_Status *status)
{
  char **items;
  int n = split_top(spec, &items);

  if (n < 0) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "Op '%s': malformed attrs \"%s\"", def->name, spec);
    return false;
  }
  def->attrs = calloc((size_t)(n > 0 ? n : 1), sizeof(*def->attrs));
  if (def->attrs == NULL)
    goto oom;
  for (int i = 0; i < n; i++) {
    struct shim_attr_def *a = &def->attrs[i];
    char *colon = strchr(items[i], ':');
    char *eq, *ge, *kind_s = NULL, *def_s = NULL;
    bool ok;

    def->num_attrs = i + 1;
    if (colon == NULL)
      goto bad;
    a->name = trim_dup(items[i], (size_t)(colon - items[i]));
    if (a->name == NULL)
      goto oom;
    if (!is_ident(a->name) || shim_op_def_attr(def, a->name) != a)
      goto bad;
    eq = strchr(colon + 1, '=');
    /* ">=" belongs to the kind, not to a default */
    ge = strstr(colon + 1, ">=");
    if (eq != NULL && ge != NULL && eq == ge + 1)
      eq = strchr(eq + 1, '=');
    kind_s = trim_dup(colon + 1, (size_t)((eq ? eq : colon + strlen(colon)) -
                                          (colon + 1)));
    if (kind_s == NULL)
      goto oom;
    if (ge != NULL && (eq == NULL || ge < eq)) {
      char *k = kind_s, *g = strstr(k, ">=");
      *g = '\0';
      a->has_minimum = parse_int(g + 2 + strspn(g + 2, " "), &a->minimum);
      if (!a->has_minimum) {
        free(kind_s);
        goto bad;
      }
      for (size_t e = strlen(k); e > 0 && isspace((unsigned char)k[e - 1]);)
        k[--e] = '\0';
    }
    if (kind_s[0] == '{' && kind_s[1 + strspn(kind_s + 1, " ")] == '\'') {
      /* A string from a set ({'LEFT', 'RIGHT'}): the kernel checks the
       * value, as TensorFlow's kernels do after its op check. */
      a->kind = TFOCL_ATTR_STRING;
      ok = kind_s[strlen(kind_s) - 1] == '}';
    } else if (kind_s[0] == '{') {
      a->kind = TFOCL_ATTR_TYPE;
      ok = parse_type_set(kind_s, &a->allowed, &a->num_allowed);
    } else {
      ok = parse_kind(kind_s, &a->kind);
    }
    free(kind_s);
    if (!ok)
      goto bad;
    if (eq != NULL) {
      def_s = trim_dup(eq + 1, strlen(eq + 1));
      if (def_s == NULL)
        goto oom;
      ok = parse_default(a->kind, def_s, &a->def);
      free(def_s);
      a->has_default = true;
      if (!ok)
        goto bad;
    }
    continue;
  bad:
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "Op '%s': malformed attr \"%s\"", def->name, items[i]);
    free_split(items, n);
    return false;
  }
  free_split(items, n);
  return true;

oom:
  free_split(items, n);
  shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
  return false;
}

static bool parse_args(struct shim_op_def *def, const char *spec, bool output,
                       TF_Status *status)
{
  char **items;
  int n = split_top(spec, &items);
  struct shim_arg_def *args;
  const char *what = output ? "output" : "input";

  if (n < 0) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "Op '%s': malformed %ss \"%s\"", def->name, what, spec);
    return false;
  }
  args = calloc((size_t)(n > 0 ? n : 1), sizeof(*args));
  if (args == NULL) {
    free_split(items, n);
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return false;
  }
  if (output) {
    def->outputs = args;
    def->num_outputs = n;
  } else {
    def->inputs = args;
    def->num_inputs = n;
  }
  for (int i = 0; i < n; i++) {
    struct shim_arg_def *arg = &args[i];
    char *colon = strchr(items[i], ':');
    char *type_s, *star;
    const struct shim_attr_def *ad;

    if (colon == NULL)
      goto bad;
    arg->name = trim_dup(items[i], (size_t)(colon - items[i]));
    type_s = colon + 1;
    star = strchr(type_s, '*');
    if (star != NULL) {
      arg->number_attr = trim_dup(type_s, (size_t)(star - type_s));
      type_s = star + 1;
    }
    type_s = trim_dup(type_s, strlen(type_s));
    if (arg->name == NULL || type_s == NULL)
      goto bad_free;
    if (!is_ident(arg->name))
      goto bad_free;
    if (arg->number_attr != NULL) {
      ad = shim_op_def_attr(def, arg->number_attr);
      if (ad == NULL || ad->kind != TFOCL_ATTR_INT)
        goto bad_free;
    }
    ad = shim_op_def_attr(def, type_s);
    if (ad != NULL && ad->kind == TFOCL_ATTR_TYPE) {
      arg->type_attr = type_s;
    } else if (ad != NULL && ad->kind == TFOCL_ATTR_TYPE_LIST &&
               arg->number_attr == NULL) {
      arg->type_list_attr = type_s;
    } else if (ad == NULL && tfocl_type_from_name(type_s, &arg->fixed_type)) {
      free(type_s);
    } else {
      goto bad_free;
    }
    continue;
  bad_free:
    free(type_s);
  bad:
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "Op '%s': malformed %s \"%s\" (types are a declared type "
                    "attr, a list(type) attr, N * T, or a type name)",
                    def->name, what, items[i]);
    free_split(items, n);
    return false;
  }
  free_split(items, n);
  return true;
}

static struct shim_op_def *op_def_parse(const char *name, const char *inputs,
                                        const char *outputs, const char *attrs,
                                        TF_Status *status)
{
  struct shim_op_def *def = calloc(1, sizeof(*def));
  size_t len;

  if (def == NULL || (def->name = strdup(name)) == NULL) {
    free(def);
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return NULL;
  }
  len = strlen(inputs) + strlen(outputs) + strlen(attrs) + 32;
  def->signature = malloc(len);
  if (def->signature == NULL) {
    op_def_free(def);
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return NULL;
  }
  snprintf(def->signature, len, "%s -> %s; attr=%s", inputs, outputs, attrs);
  /* attrs first: args refer to them */
  if (!parse_attrs(def, attrs, status) ||
      !parse_args(def, inputs, false, status) ||
      !parse_args(def, outputs, true, status)) {
    op_def_free(def);
    return NULL;
  }
  shim_set_ok(status);
  return def;
}

static const struct shim_op_def *find_locked(const char *name)
{
  for (int i = 0; i < num_op_defs; i++)
    if (!op_defs[i]->retired && strcmp(op_defs[i]->name, name) == 0)
      return op_defs[i];
  return NULL;
}

static void add_locked(struct shim_op_def *def, TF_Status *status)
{
  struct shim_op_def **v;

  if (find_locked(def->name) != NULL) {
    shim_set_status(status, TF_ALREADY_EXISTS,
                    "Op with name %s already registered", def->name);
    op_def_free(def);
    return;
  }
  v = realloc(op_defs, sizeof(*v) * (size_t)(num_op_defs + 1));
  if (v == NULL) {
    op_def_free(def);
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return;
  }
  op_defs = v;
  op_defs[num_op_defs++] = def;
  shim_set_ok(status);
}

static void load_builtins(void)
{
  TF_Status *st = TF_NewStatus();

  if (st == NULL)
    return;
  pthread_mutex_lock(&op_lock);
  for (int i = 0; i < shim_num_builtin_op_defs; i++) {
    const struct shim_op_def_row *r = &shim_builtin_op_defs[i];
    struct shim_op_def *def =
        op_def_parse(r->name, r->inputs, r->outputs, r->attrs, st);
    /* A malformed built-in row is our bug: its op is then unknown, which
     * the ops suite reports for the kernels that need it (and the trace
     * says why); skip it here rather than abort. */
    if (def != NULL)
      add_locked(def, st);
    else
      SHIM_TRACE("built-in op %s: %s", r->name, TF_Message(st));
  }
  pthread_mutex_unlock(&op_lock);
  TF_DeleteStatus(st);
}

const struct shim_op_def *shim_op_def_find(const char *name)
{
  const struct shim_op_def *def;

  pthread_once(&builtin_once, load_builtins);
  pthread_mutex_lock(&op_lock);
  def = find_locked(name);
  pthread_mutex_unlock(&op_lock);
  return def;
}

void tfocl_op_def_add(const char *op_name, const char *inputs,
                      const char *outputs, const char *attrs,
                      TF_Status *status)
{
  struct shim_op_def *def;

  if (op_name == NULL || !is_ident(op_name)) {
    shim_set_status(status, TF_INVALID_ARGUMENT, "Invalid op name '%s'",
                    op_name != NULL ? op_name : "(null)");
    return;
  }
  pthread_once(&builtin_once, load_builtins);
  def = op_def_parse(op_name, inputs != NULL ? inputs : "",
                     outputs != NULL ? outputs : "",
                     attrs != NULL ? attrs : "", status);
  if (def == NULL)
    return;
  pthread_mutex_lock(&op_lock);
  add_locked(def, status);
  pthread_mutex_unlock(&op_lock);
}

void shim_op_def_register(const char *name, const char *inputs,
                          const char *outputs, const char *attrs,
                          void (*shape_fn)(TF_ShapeInferenceContext *,
                                           TF_Status *),
                          TF_Status *status)
{
  struct shim_op_def *def;

  /* OpDefBuilder's name rule: an internal "_" name, or a capital first. */
  if (name == NULL || !is_ident(name) ||
      !(name[0] == '_' || (name[0] >= 'A' && name[0] <= 'Z'))) {
    shim_set_status(status, TF_INVALID_ARGUMENT, "Invalid name: %s",
                    name != NULL ? name : "(null)");
    return;
  }
  pthread_once(&builtin_once, load_builtins);
  def = op_def_parse(name, inputs, outputs, attrs, status);
  if (def == NULL)
    return;
  def->shape_fn = shape_fn;
  def->owner = shim_registry_loading_plugin();
  pthread_mutex_lock(&op_lock);
  add_locked(def, status);
  pthread_mutex_unlock(&op_lock);
}

void shim_op_defs_remove_plugin(const struct tfocl_plugin *p)
{
  if (p == NULL)
    return;
  pthread_mutex_lock(&op_lock);
  for (int i = 0; i < num_op_defs; i++) {
    if (op_defs[i]->owner == p) {
      /* Its shape function points into the library going away. */
      op_defs[i]->retired = true;
      op_defs[i]->shape_fn = NULL;
      op_defs[i]->owner = NULL;
    }
  }
  pthread_mutex_unlock(&op_lock);
}

bool tfocl_op_def_exists(const char *op_name)
{
  return op_name != NULL && shim_op_def_find(op_name) != NULL;
}

/* ---- nodes -------------------------------------------------------------- */

const struct shim_attr_value *shim_node_attr(const struct shim_node *node,
                                             const char *name)
{
  for (int i = 0; i < node->num_attrs; i++)
    if (strcmp(node->attrs[i].name, name) == 0)
      return &node->attrs[i].value;
  return NULL;
}

static struct shim_attr_value *node_attr_mut(struct shim_node *node,
                                             const char *name)
{
  return (struct shim_attr_value *)shim_node_attr(node, name);
}

/* Adds (takes ownership of the value's storage). */
static bool node_add_attr(struct shim_node *node, const char *name,
                          struct shim_attr_value *value)
{
  struct shim_attr *v;
  char *n = strdup(name);

  v = realloc(node->attrs, sizeof(*v) * (size_t)(node->num_attrs + 1));
  if (v == NULL || n == NULL) {
    if (v != NULL)
      node->attrs = v;
    free(n);
    shim_attr_value_finish(value);
    return false;
  }
  node->attrs = v;
  v[node->num_attrs].name = n;
  v[node->num_attrs].value = *value;
  node->num_attrs++;
  return true;
}

static int attr_cmp(const void *a, const void *b)
{
  return strcmp(((const struct shim_attr *)a)->name,
                ((const struct shim_attr *)b)->name);
}

void shim_node_format_attrs(struct shim_strbuf *b,
                            const struct shim_node *node)
{
  struct shim_attr *sorted;

  if (node->num_attrs == 0)
    return;
  sorted = malloc(sizeof(*sorted) * (size_t)node->num_attrs);
  if (sorted == NULL)
    return;
  memcpy(sorted, node->attrs, sizeof(*sorted) * (size_t)node->num_attrs);
  qsort(sorted, (size_t)node->num_attrs, sizeof(*sorted), attr_cmp);
  for (int i = 0; i < node->num_attrs; i++) {
    shim_strbuf_printf(b, "%s%s=", i ? ", " : "", sorted[i].name);
    shim_attr_value_format(b, &sorted[i].value);
  }
  free(sorted);
}

static void node_error(TF_Status *status, const struct shim_node *node,
                       const char *what)
{
  shim_set_status(status, TF_INVALID_ARGUMENT,
                  "%s; NodeDef: {{node %s}}; Op<name=%s; signature=%s>", what,
                  node->name, node->def->name, node->def->signature);
}

/* Number of flat inputs/outputs an arg takes, -1 if not known yet. */
static int arg_count(const struct shim_node *node,
                     const struct shim_arg_def *arg)
{
  const struct shim_attr_value *v;

  if (arg->number_attr != NULL) {
    v = shim_node_attr(node, arg->number_attr);
    if (v == NULL)
      return -1;
    /* a negative N fails the input count check below */
    return v->v.i < 0 ? 0 : (int)v->v.i;
  }
  if (arg->type_list_attr != NULL) {
    v = shim_node_attr(node, arg->type_list_attr);
    return v != NULL ? v->v.list.count : -1;
  }
  return 1;
}

/* Infers the one list length the given input count leaves open. */
static bool infer_counts(struct shim_node *node, int num_inputs,
                         TF_Status *status)
{
  const struct shim_op_def *def = node->def;
  const char *unknown = NULL;
  int known = 0, mult = 0;
  char msg[256];

  for (int i = 0; i < def->num_inputs; i++) {
    const struct shim_arg_def *arg = &def->inputs[i];
    int c = arg_count(node, arg);
    const char *a = arg->number_attr ? arg->number_attr : arg->type_list_attr;
    if (c >= 0) {
      known += c;
      continue;
    }
    if (unknown != NULL && strcmp(unknown, a) != 0) {
      node_error(status, node,
                 "Cannot infer the lengths of two list inputs; give the "
                 "attrs explicitly");
      return false;
    }
    unknown = a;
    mult++;
  }
  if (unknown != NULL) {
    int rest = num_inputs - known;
    if (rest < 0 || rest % mult != 0) {
      snprintf(msg, sizeof(msg),
               "%d inputs cannot fill the inputs of the op", num_inputs);
      node_error(status, node, msg);
      return false;
    }
    const struct shim_attr_def *ad = shim_op_def_attr(def, unknown);
    struct shim_attr_value v = {.kind = ad->kind};
    if (ad->kind == TFOCL_ATTR_INT) {
      v.v.i = rest / mult;
    } else {
      /* list(type): the types come from the inputs themselves */
      int start = 0;
      for (int i = 0; i < def->num_inputs; i++) {
        if (def->inputs[i].type_list_attr != NULL &&
            strcmp(def->inputs[i].type_list_attr, unknown) == 0)
          break;
        start += arg_count(node, &def->inputs[i]);
      }
      v.v.list.count = rest;
      v.v.list.items = calloc((size_t)(rest > 0 ? rest : 1),
                              sizeof(TF_DataType));
      if (v.v.list.items == NULL)
        goto oom;
      memcpy(v.v.list.items, node->input_types + start,
             sizeof(TF_DataType) * (size_t)rest);
    }
    if (!node_add_attr(node, unknown, &v))
      goto oom;
  }
  return true;

oom:
  shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
  return false;
}

/* Sets/checks type attrs from the input types. */
static bool infer_types(struct shim_node *node, TF_Status *status)
{
  const struct shim_op_def *def = node->def;
  int pos = 0;
  char msg[512];

  for (int i = 0; i < def->num_inputs; i++) {
    const struct shim_arg_def *arg = &def->inputs[i];
    int c = arg_count(node, arg);
    node->input_arg_start[i] = pos;
    for (int j = 0; j < c; j++, pos++) {
      TF_DataType got = node->input_types[pos], want;
      if (arg->fixed_type != 0) {
        want = arg->fixed_type;
      } else if (arg->type_list_attr != NULL) {
        want = ((TF_DataType *)shim_node_attr(node, arg->type_list_attr)
                    ->v.list.items)[j];
      } else {
        struct shim_attr_value *t = node_attr_mut(node, arg->type_attr);
        if (t == NULL) {
          struct shim_attr_value v = {.kind = TFOCL_ATTR_TYPE,
                                      .v.type = got};
          if (!node_add_attr(node, arg->type_attr, &v)) {
            shim_set_status(status, TF_RESOURCE_EXHAUSTED,
                            "out of host memory");
            return false;
          }
          continue;
        }
        if (t->v.type != got) {
          snprintf(msg, sizeof(msg),
                   "Inconsistent values for attr '%s' %s vs. %s while "
                   "building NodeDef '%s'",
                   arg->type_attr, tfocl_type_name(t->v.type),
                   tfocl_type_name(got), node->name);
          node_error(status, node, msg);
          return false;
        }
        continue;
      }
      if (got != want) {
        snprintf(msg, sizeof(msg),
                 "Input %d of node %s was passed %s incompatible with "
                 "expected %s.",
                 pos, node->name, shim_type_short_name(got),
                 shim_type_short_name(want));
        node_error(status, node, msg);
        return false;
      }
    }
  }
  return true;
}

static bool check_attr_values(struct shim_node *node, TF_Status *status)
{
  const struct shim_op_def *def = node->def;
  char msg[512];

  for (int i = 0; i < def->num_attrs; i++) {
    const struct shim_attr_def *ad = &def->attrs[i];
    const struct shim_attr_value *v = shim_node_attr(node, ad->name);

    if (v == NULL)
      continue;
    if (ad->num_allowed > 0) {
      bool ok = false;
      struct shim_strbuf allowed = {0};
      for (int k = 0; k < ad->num_allowed; k++) {
        ok = ok || ad->allowed[k] == v->v.type;
        shim_strbuf_printf(&allowed, "%s%s", k ? ", " : "",
                           shim_type_short_name(ad->allowed[k]));
      }
      if (!ok) {
        snprintf(msg, sizeof(msg),
                 "Value for attr '%s' of %s is not in the list of allowed "
                 "values: %s",
                 ad->name, shim_type_short_name(v->v.type),
                 shim_strbuf_str(&allowed));
        shim_strbuf_finish(&allowed);
        node_error(status, node, msg);
        return false;
      }
      shim_strbuf_finish(&allowed);
    }
    if (ad->has_minimum) {
      int64_t got = shim_attr_kind_is_list(ad->kind) ? v->v.list.count
                                                     : v->v.i;
      if (got < ad->minimum) {
        if (shim_attr_kind_is_list(ad->kind))
          snprintf(msg, sizeof(msg),
                   "Length for attr '%s' of %lld must be at least minimum "
                   "%lld",
                   ad->name, (long long)got, (long long)ad->minimum);
        else
          snprintf(msg, sizeof(msg),
                   "Value for attr '%s' of %lld must be at least minimum "
                   "%lld",
                   ad->name, (long long)got, (long long)ad->minimum);
        node_error(status, node, msg);
        return false;
      }
    }
  }
  return true;
}

static bool compute_outputs(struct shim_node *node, TF_Status *status)
{
  const struct shim_op_def *def = node->def;
  int total = 0, pos = 0;

  for (int i = 0; i < def->num_outputs; i++) {
    int c = arg_count(node, &def->outputs[i]);
    if (c < 0) {
      node_error(status, node, "Cannot determine the number of outputs");
      return false;
    }
    total += c;
  }
  node->output_types = calloc((size_t)(total > 0 ? total : 1),
                              sizeof(TF_DataType));
  node->output_arg_start = calloc((size_t)def->num_outputs + 1, sizeof(int));
  if (node->output_types == NULL || node->output_arg_start == NULL) {
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return false;
  }
  for (int i = 0; i < def->num_outputs; i++) {
    const struct shim_arg_def *arg = &def->outputs[i];
    int c = arg_count(node, arg);
    node->output_arg_start[i] = pos;
    for (int j = 0; j < c; j++, pos++) {
      if (arg->fixed_type != 0)
        node->output_types[pos] = arg->fixed_type;
      else if (arg->type_list_attr != NULL)
        node->output_types[pos] =
            ((TF_DataType *)shim_node_attr(node, arg->type_list_attr)
                 ->v.list.items)[j];
      else
        node->output_types[pos] = shim_node_attr(node, arg->type_attr)->v.type;
    }
  }
  node->output_arg_start[def->num_outputs] = pos;
  node->num_outputs = total;
  return true;
}

bool shim_node_init(struct shim_node *node, const struct shim_op_def *def,
                    const struct tfocl_attr *attrs, int num_attrs,
                    const TF_DataType *input_types, int num_inputs,
                    TF_Status *status)
{
  char msg[512];
  int expected = 0;

  *node = (struct shim_node){.def = def};
  node->name = strdup(def->name);
  node->input_types = calloc((size_t)(num_inputs > 0 ? num_inputs : 1),
                             sizeof(TF_DataType));
  node->input_arg_start = calloc((size_t)def->num_inputs + 1, sizeof(int));
  if (node->name == NULL || node->input_types == NULL ||
      node->input_arg_start == NULL)
    goto oom;
  if (num_inputs > 0)
    memcpy(node->input_types, input_types,
           sizeof(TF_DataType) * (size_t)num_inputs);
  node->num_inputs = num_inputs;

  /* Given attributes: known to the op (or internal "_x"), of its kind. */
  for (int i = 0; i < num_attrs; i++) {
    const struct tfocl_attr *a = &attrs[i];
    const struct shim_attr_def *ad;
    struct shim_attr_value v;

    if (a->name == NULL) {
      node_error(status, node, "Attribute without a name");
      goto fail;
    }
    ad = shim_op_def_attr(def, a->name);
    if (ad == NULL && a->name[0] != '_') {
      snprintf(msg, sizeof(msg), "NodeDef mentions attr '%s' not in Op",
               a->name);
      node_error(status, node, msg);
      goto fail;
    }
    if (ad != NULL && ad->kind != a->kind) {
      snprintf(msg, sizeof(msg),
               "AttrValue had value with type '%s' when '%s' expected\n\t "
               "for attr '%s'",
               shim_attr_kind_name(a->kind), shim_attr_kind_name(ad->kind),
               a->name);
      node_error(status, node, msg);
      goto fail;
    }
    if (shim_node_attr(node, a->name) != NULL) {
      snprintf(msg, sizeof(msg), "Attr '%s' given twice", a->name);
      node_error(status, node, msg);
      goto fail;
    }
    if (!shim_attr_value_from_public(a, &v)) {
      shim_attr_value_finish(&v);
      goto oom;
    }
    if (!node_add_attr(node, a->name, &v))
      goto oom;
  }

  if (!infer_counts(node, num_inputs, status))
    goto fail;
  for (int i = 0; i < def->num_inputs; i++) {
    int c = arg_count(node, &def->inputs[i]);
    if (c < 0) {
      node_error(status, node, "Cannot infer input list lengths");
      goto fail;
    }
    expected += c;
  }
  node->input_arg_start[def->num_inputs] = expected;
  if (expected != num_inputs) {
    snprintf(msg, sizeof(msg),
             "NodeDef expected %d inputs but %d were given", expected,
             num_inputs);
    node_error(status, node, msg);
    goto fail;
  }
  if (!infer_types(node, status))
    goto fail;

  /* Defaults, then every attr of the op must have a value. */
  for (int i = 0; i < def->num_attrs; i++) {
    const struct shim_attr_def *ad = &def->attrs[i];
    struct shim_attr_value v;
    if (shim_node_attr(node, ad->name) != NULL)
      continue;
    if (!ad->has_default) {
      snprintf(msg, sizeof(msg), "NodeDef missing attr '%s' from Op",
               ad->name);
      node_error(status, node, msg);
      goto fail;
    }
    if (!shim_attr_value_copy(&ad->def, &v)) {
      shim_attr_value_finish(&v);
      goto oom;
    }
    if (!node_add_attr(node, ad->name, &v))
      goto oom;
  }
  if (!check_attr_values(node, status) || !compute_outputs(node, status))
    goto fail;
  shim_set_ok(status);
  return true;

oom:
  shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
fail:
  shim_node_finish(node);
  return false;
}

void shim_node_finish(struct shim_node *node)
{
  shim_attrs_free(node->attrs, node->num_attrs);
  free(node->name);
  free(node->input_types);
  free(node->output_types);
  free(node->input_arg_start);
  free(node->output_arg_start);
  *node = (struct shim_node){0};
}
