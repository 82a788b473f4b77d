/* tfocl bench: what the driver's files share. tfocl_bench.c holds the
 * harness (rows, interleaved measurement, the sides a case compares) and
 * the command; tfocl_bench_ops.c the op cases; tfocl_bench_latency.c
 * enqueue cost, copies and first-op latency; tfocl_bench_output.c the
 * markdown table and the JSON. The references are tfocl_bench.h's. */
#ifndef TFOCL_BENCH_INTERNAL_H_
#define TFOCL_BENCH_INTERNAL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tfocl_bench.h"
#include "tfocl_cmd.h"

#define MAX_FILTERS 16
#define MAX_REFS 2

/* How a row's per-repetition seconds become its figures. */
struct metric {
  const char *unit;
  double scale; /* rate: work / s * scale; time: s / work * scale */
  bool is_time;
};

struct series {
  double *v; /* figures in the row's unit, one per repetition */
  int n;
  double warmup_s; /* the untimed first call; < 0 when none */
};

struct row {
  char name[64];
  struct metric metric;
  bool kernel; /* a device kernel (candidate for "slowest") */
  bool ours_ok;
  struct series ours;
  char ref_name[80];
  bool ref_ok;
  struct series ref;
  char note[160];
};

struct bench {
  struct tfocl_common_opts common;
  bool quick, clblast_all;
  int reps; /* --reps, 0 = per case */
  int device_ordinal;
  char filter_buf[512];
  const char *filters[MAX_FILTERS];
  int num_filters;
  char plugin_path[4096 + 32];

  struct tfocl_plugin *plugin;
  struct tfocl_device *dev;
  const SP_StreamExecutor *se;
  const SP_Device *sp;
  TF_Status *st;
  /* Freed device memory reused, as TensorFlow's BFC allocator over this
   * platform (tfocl_device_keep_freed_memory); the notes say which. */
  bool reuses_memory;

  bool blas_ok;
  char blas_name[160], blas_why[160];
  struct bench_rawcl *raw;
  bool raw_tried;
  char raw_why[200];

  struct row *rows;
  int num_rows, cap_rows;
  int failures;
};

/* The units rows are reported in. */
extern const struct metric GFLOPS;
extern const struct metric GBPS;
extern const struct metric OPS;
extern const struct metric US_PER_OP;
extern const struct metric MS;

/* One timed repetition: does the work once and returns its seconds in
 * *seconds; false on failure (reported on stderr). */
typedef bool (*rep_fn)(struct bench *b, void *ctx, double *seconds);

struct side {
  const char *name;
  rep_fn fn;
  void *ctx;
  double work; /* flop, bytes or ops per repetition */
  bool available;
  const char *why; /* when not available */
};

/* One op, created once, computed on fixed inputs. */
struct op_side {
  struct tfocl_op *op;
  TF_Tensor *in[3];
  int n;
};

/* An op computed `repeat` times per repetition, back to back before one
 * synchronize, its outputs kept in `outs` until then. */
struct op_stream_side {
  struct op_side o;
  int repeat;
  TF_Tensor **outs;
};

/* Copies through the stream executor, each followed by a synchronize. */
enum copy_kind { COPY_H2D, COPY_D2H, COPY_D2D, COPY_H2D_SYNC, COPY_D2H_SYNC };
struct copy_side {
  enum copy_kind kind;
  void *host;
  void *dev_a, *dev_b; /* device addresses (TF_TensorData) */
  size_t bytes;
};

enum host_kind {
  HOST_ADD,
  HOST_MUL,
  HOST_RELU,
  HOST_SUM_ROWS,
  HOST_SUM_COLS,
  HOST_SOFTMAX,
  HOST_MEMCPY,
  HOST_SGEMM,
  HOST_TRANSPOSE,
  HOST_CONCAT
};
struct host_side {
  enum host_kind kind;
  float *z;
  const float *x, *y;
  size_t rows, cols; /* element-wise: rows * cols elements */
  /* sgemm: batches of [m,k] x [k,n] (transposes as flagged), all of them
   * `repeat` times (0: once) */
  int batches, m, n, k, repeat;
  bool ta, tb;
  /* transpose: batches of [rows, cols]; concat: y's columns */
  size_t y_cols;
};

/* ---- tfocl_bench.c: the harness ------------------------------------------ */

/* Figures, filters, inputs and the environment the cases share. */
void bench_summary(const struct series *s, double out[3]);
double bench_row_ratio(const struct row *r);
bool bench_want(const struct bench *b, const char *name);
bool bench_ok(struct bench *b, const char *what);
void bench_fill_random(float *p, size_t n, unsigned seed);
TF_Tensor *bench_host_random(const int64_t *dims, int rank, unsigned seed);
TF_Tensor *bench_to_device(struct bench *b, TF_Tensor *host);
int bench_reps_or(const struct bench *b, int normal, int quick);

/* Rows and their measurement (the timing rules are tfocl_bench.c's). */
struct row *bench_new_row(struct bench *b, const char *name,
                          struct metric metric, bool kernel);
void bench_progress(const struct bench *b, const struct row *r);
void bench_measure(struct bench *b, const char *name, struct metric metric,
                   bool kernel, const struct side *ours,
                   const struct side *refs, int num_refs, int reps,
                   const char *note);

/* The sides a case measures: device ops and copies, host loops, BLAS. */
struct tfocl_op *bench_make_op(struct bench *b, const char *op_name,
                               const struct tfocl_attr *attrs, int num_attrs,
                               const TF_DataType *types, int n);
struct side bench_op_side(struct op_side *o, double work);
struct side bench_op_stream_side(struct op_stream_side *s, double work);
bool bench_copy_rep(struct bench *b, void *p, double *seconds);
bool bench_host_rep(struct bench *b, void *p, double *seconds);
/* "host loop (N threads)": the host loops' side name, set once. */
extern char bench_host_loop_name[64];
struct side bench_host_side(struct host_side *h, double work);
struct side bench_blas_side(struct bench *b, struct host_side *h, double work);

/* ---- tfocl_bench_ops.c: op cases ----------------------------------------- */

void bench_matmul(struct bench *b);
void bench_conv(struct bench *b);
void bench_depthwise(struct bench *b);
size_t bench_big_bytes(const struct bench *b);
void bench_elementwise(struct bench *b);
void bench_broadcast(struct bench *b);
void bench_reduce(struct bench *b);
void bench_pool(struct bench *b);
void bench_sparse(struct bench *b);
void bench_movement(struct bench *b);

/* ---- tfocl_bench_latency.c: enqueue cost, copies, first op --------------- */

void bench_tiny(struct bench *b);
void bench_copies(struct bench *b);
/* The --first-op child process; its exit status. */
int bench_first_op_child(struct bench *b);
void bench_first_op(struct bench *b);

/* ---- tfocl_bench_output.c: the table and JSON ---------------------------- */

const char *bench_device_name(const struct bench *b);
/* How an op's output is allocated, for the notes. */
const char *bench_output_memory(const struct bench *b);
void bench_print_json(const struct bench *b);
void bench_print_markdown(const struct bench *b);

#endif /* TFOCL_BENCH_INTERNAL_H_ */
