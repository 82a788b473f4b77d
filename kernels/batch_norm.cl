/* Batch normalisation: FusedBatchNormV3 and FusedBatchNormGradV3.
 *
 * Built per storage type of x (-DT=float, half, ushort for bfloat16) and
 * index width (-DIDX=int where every index fits in 32 bits, long beyond);
 * the per-channel tensors (scale, mean, ...) are float whatever T is
 * (TensorFlow's U), and everything is computed in float.
 *
 * x is viewed as [outer, depth, inner]: NHWC is [N*H*W, C, 1], NCHW is
 * [N, C, H*W]; each channel reduces over its rest = outer * inner elements.
 * The reductions are parallel over many work-groups and accurate in float:
 *   1. bn_*_last / bn_*_first: each work-group takes a slice of the rest of
 *      one tile of channels (bn_*_rows, a CPU's channels last: a
 *      work-item takes a slice of rows, every channel of them); each
 *      work-item folds at most a few hundred elements in order (Welford's update for the statistics: a running
 *      mean and sum of squared deviations, never E[x^2] - E[x]^2; plain
 *      sums for the gradient's sum(dy) and sum(dy * (x - mean))), then the
 *      work-group combines its work-items in a tree (Chan's merge for the
 *      statistics) and writes one partial per (slice, channel). The
 *      statistics are of x - pivot, the pivot being the channel's first
 *      element: for a mean far from zero and a small spread, x - pivot is
 *      exact and the partial means stay small, so their rounding (a float
 *      mean of 1000 is only known to 3e-5) does not enter Chan's merges as
 *      spurious variance;
 *   2. bn_fold_*: a work-group per channel combines the slices' partials,
 *      again as a tree, and writes the per-channel outputs;
 *   3. bn_apply / bn_grad_apply: one work-item per element normalises (or
 *      back-propagates) with the per-channel results.
 * So x is read twice (three times for the gradient's x and dy) and written
 * once, and no float sum runs sequentially over more than a few hundred
 * terms before it enters a tree. */
#include "common.clh"

#if defined(T_IS_HALF)
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) OCL_STORE_HALF(p, i, v)
#elif defined(T_IS_BFLOAT16)
#define LOAD(p, i) ocl_bf16_to_float((p)[i])
#define STORE(p, i, v) ((p)[i] = ocl_float_to_bf16(v))
#else
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (v))
#endif

/* The _rows kernels' arguments: OCL_TENSOR_ARG, restrict (no two of a
 * kernel's overlap), so that their channel loops vectorise unchecked. */
#define BN_ROW_ARG(T, name) __global T *restrict name##_base, ulong name##_offset

/* struct bn_args32/64 of batch_norm.c: IDX members only. */
typedef struct {
  IDX depth, rest, inner;
  IDX slice;  /* rest elements per slice (the last may have fewer) */
  IDX slices;
  IDX tile_c; /* _last kernels: channels per work-group ... */
  IDX tile_r; /* ... and work-items per channel (tile_c * tile_r <= local) */
  IDX tiles;  /* channel tiles: ceil(depth / tile_c) */
  IDX top;    /* the power of two >= tile_r (_last) or = the local size */
  IDX count;  /* elements (the _apply kernels), rows (_apply_rows) */
  IDX run;    /* CPU shape: rest elements per work-item, in a row; GPU
               * shape 0: work-items interleave */
} bn_t;

/* Channel c's pivot: its first element (rest index 0). */
static float bn_pivot(const __global T *xp, const bn_t *q, IDX c)
{
  return LOAD(xp, c * q->inner);
}

/* The rest elements [*start, *end) work-item k of `per_group` folds in its
 * group's slice, *step apart: a contiguous run on a CPU (memory order for
 * a core walking it), interleaved on a GPU (neighbouring work-items on
 * neighbouring addresses). */
static void bn_items(const bn_t *q, IDX s, IDX k, IDX per_group, IDX *start,
                     IDX *end, IDX *step)
{
  IDX r0 = s * q->slice, r1 = min(r0 + q->slice, q->rest);
  if (q->run > 0) {
    *start = r0 + k * q->run;
    *end = min(*start + q->run, r1);
    *step = 1;
  } else {
    *start = r0 + k;
    *end = r1;
    *step = per_group;
  }
}

/* Channels first: rest index r as (image, offset in the image's channel
 * plane), advanced without a division per element. */
typedef struct {
  IDX n, i;
} bn_pos_t;

static bn_pos_t bn_pos(const bn_t *q, IDX r)
{
  bn_pos_t p = {r / q->inner, r % q->inner};
  return p;
}

static void bn_advance(const bn_t *q, bn_pos_t *p, IDX step)
{
  p->i += step;
  if (p->i >= q->inner) {
    p->n += p->i / q->inner;
    p->i %= q->inner;
  }
}

static IDX bn_pos_at(const bn_t *q, const bn_pos_t *p, IDX c)
{
  return (p->n * q->depth + c) * q->inner + p->i;
}

/* ---- Statistics: Welford within a work-item, Chan across ----------------- */

/* Welford's update of (n, mean, m2) with v. */
static void welford(float *n, float *mean, float *m2, float v)
{
  *n += 1.0f;
  float d = v - *mean;
  *mean += d / *n;
  *m2 += d * (v - *mean);
}

/* Chan et al.'s merge of (nb, mb, qb) into (n, mean, m2). */
static void chan(float *n, float *mean, float *m2, float nb, float mb,
                 float qb)
{
  if (nb == 0.0f)
    return;
  float total = *n + nb;
  float d = mb - *mean;
  float f = nb / total;
  *mean += d * f;
  *m2 += qb + d * d * *n * f;
  *n = total;
}

/* Tree over the work-items i < n of a group that share `stride` apart
 * (i = lane + k * stride, k < n); afterwards k = 0 holds them all:
 * (count, mean, m2) of x - pivot by Chan's merge, and the plain sum of x
 * (the mean's own estimate: exact to a few ulps of the mean whatever the
 * pivot). */
static void tree_stats(IDX lane, IDX k, IDX n, IDX top, IDX stride,
                       __local float *ln, __local float *lm, __local float *lq,
                       __local float *lx)
{
  IDX me = lane + k * stride;
  for (IDX step = top / 2; step > 0; step /= 2) {
    if (k < step && k + step < n) {
      IDX o = me + step * stride;
      float cn = ln[me], cm = lm[me], cq = lq[me];
      chan(&cn, &cm, &cq, ln[o], lm[o], lq[o]);
      ln[me] = cn;
      lm[me] = cm;
      lq[me] = cq;
      lx[me] += lx[o];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

/* Channels last (inner == 1): a work-group is a [tile_r, tile_c] tile of
 * rows and channels, so neighbouring work-items read neighbouring channels
 * (a whole row when depth <= tile_c). part: [3][slices][depth] (mean and
 * m2 of x - pivot, sum of x). */
__kernel void bn_stats_last(OCL_TENSOR_ARG(const T, x),
                            OCL_TENSOR_ARG(float, part), bn_t q,
                            __local float *ln, __local float *lm,
                            __local float *lq, __local float *lx)
{
  IDX lid = (IDX)get_local_id(0), g = (IDX)get_group_id(0);
  IDX tile = g % q.tiles, s = g / q.tiles;
  IDX tc = lid % q.tile_c, tr = lid / q.tile_c;
  IDX c = tile * q.tile_c + tc;
  bool active = tr < q.tile_r && c < q.depth;
  const __global T *xp = OCL_PTR(const T, x);
  IDX r0, r1, step;
  bn_items(&q, s, tr, q.tile_r, &r0, &r1, &step);
  float n = 0.0f, mean = 0.0f, m2 = 0.0f, sum = 0.0f;
  if (active && q.run > 0) {
    /* A CPU core's run of rows: two passes over it while it is cached,
     * no division per element. */
    float pivot = bn_pivot(xp, &q, c), s1 = 0.0f;
    for (IDX r = r0; r < r1; r++) {
      float v = LOAD(xp, r * q.depth + c);
      s1 += v - pivot;
      sum += v;
    }
    n = (float)(r1 > r0 ? r1 - r0 : 0);
    mean = n > 0.0f ? s1 / n : 0.0f;
    for (IDX r = r0; r < r1; r++) {
      float d = (LOAD(xp, r * q.depth + c) - pivot) - mean;
      m2 += d * d;
    }
  } else if (active) {
    float pivot = bn_pivot(xp, &q, c);
    for (IDX r = r0; r < r1; r += step) {
      float v = LOAD(xp, r * q.depth + c);
      welford(&n, &mean, &m2, v - pivot);
      sum += v;
    }
  }
  ln[lid] = n;
  lm[lid] = mean;
  lq[lid] = m2;
  lx[lid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  tree_stats(tc, active ? tr : q.top, q.tile_r, q.top, q.tile_c, ln, lm, lq,
             lx);
  if (active && tr == 0) {
    __global float *pp = OCL_PTR(float, part);
    pp[s * q.depth + c] = lm[lid];
    pp[(q.slices + s) * q.depth + c] = lq[lid];
    pp[(2 * q.slices + s) * q.depth + c] = lx[lid];
  }
}

/* The CPU shape, channels last: a work-item per slice of rows folds every
 * channel of them, channels innermost (contiguous: the compiler vectorises
 * the channel loop), accumulating in its own part rows; two passes over a
 * slice that stays cached. bn_stats_last's work-items, a channel each,
 * strode a row apart and ran scalar (0.17 of a device copy's speed). */
__kernel void bn_stats_rows(BN_ROW_ARG(const T, x), BN_ROW_ARG(float, part),
                            bn_t q)
{
  IDX s = (IDX)get_global_id(0);
  if (s >= q.slices)
    return;
  const __global T *xp = OCL_PTR(const T, x);
  __global float *pp = OCL_PTR(float, part);
  __global float *mean = pp + s * q.depth;
  __global float *m2 = pp + (q.slices + s) * q.depth;
  __global float *sum = pp + (2 * q.slices + s) * q.depth;
  IDX r0 = s * q.slice, r1 = min(r0 + q.slice, q.rest);
  for (IDX c = 0; c < q.depth; c++) {
    mean[c] = 0.0f;
    m2[c] = 0.0f;
    sum[c] = 0.0f;
  }
  /* The pivots (bn_pivot) are row 0. */
  for (IDX r = r0; r < r1; r++) {
    const __global T *row = xp + r * q.depth;
    for (IDX c = 0; c < q.depth; c++) {
      float v = LOAD(row, c);
      mean[c] += v - LOAD(xp, c);
      sum[c] += v;
    }
  }
  float n = (float)(r1 - r0);
  for (IDX c = 0; c < q.depth; c++)
    mean[c] /= n;
  for (IDX r = r0; r < r1; r++) {
    const __global T *row = xp + r * q.depth;
    for (IDX c = 0; c < q.depth; c++) {
      float d = (LOAD(row, c) - LOAD(xp, c)) - mean[c];
      m2[c] += d * d;
    }
  }
}

/* A CPU core's sums over contiguous elements, in BN_LANES interleaved
 * partial sums (a vector of them, summed pairwise at the end): one strict
 * float sum is a dependent add per element and runs scalar. */
#define BN_LANES 8

static float bn_lanes_total(const float *lane)
{
  float t[BN_LANES / 2];
  for (int u = 0; u < BN_LANES / 2; u++)
    t[u] = lane[u] + lane[u + BN_LANES / 2];
  return (t[0] + t[2]) + (t[1] + t[3]);
}

/* lane_shifted += p[j] - pivot, lane_sum += p[j] over j < len. */
static void bn_lanes_sums(const __global T *p, IDX len, float pivot,
                          float *lane_shifted, float *lane_sum)
{
  IDX j = 0;
  for (; j + BN_LANES <= len; j += BN_LANES)
    for (int u = 0; u < BN_LANES; u++) {
      float v = LOAD(p, j + u);
      lane_shifted[u] += v - pivot;
      lane_sum[u] += v;
    }
  for (int u = 0; j < len; j++, u++) {
    float v = LOAD(p, j);
    lane_shifted[u] += v - pivot;
    lane_sum[u] += v;
  }
}

/* lane_m2 += ((p[j] - pivot) - mean)^2 over j < len. */
static void bn_lanes_m2(const __global T *p, IDX len, float pivot, float mean,
                        float *lane_m2)
{
  IDX j = 0;
  for (; j + BN_LANES <= len; j += BN_LANES)
    for (int u = 0; u < BN_LANES; u++) {
      float d = (LOAD(p, j + u) - pivot) - mean;
      lane_m2[u] += d * d;
    }
  for (int u = 0; j < len; j++, u++) {
    float d = (LOAD(p, j) - pivot) - mean;
    lane_m2[u] += d * d;
  }
}

/* lane_a += dy[j], lane_b += dy[j] * (x[j] - m) over j < len. */
static void bn_lanes_grad(const __global T *dy, const __global T *x, IDX len,
                          float m, float *lane_a, float *lane_b)
{
  IDX j = 0;
  for (; j + BN_LANES <= len; j += BN_LANES)
    for (int u = 0; u < BN_LANES; u++) {
      float d = LOAD(dy, j + u);
      lane_a[u] += d;
      lane_b[u] += d * (LOAD(x, j + u) - m);
    }
  for (int u = 0; j < len; j++, u++) {
    float d = LOAD(dy, j);
    lane_a[u] += d;
    lane_b[u] += d * (LOAD(x, j) - m);
  }
}

/* Channels first (inner > 1): a work-group per (slice, channel), its
 * work-items on neighbouring elements of the channel's rows. */
__kernel void bn_stats_first(OCL_TENSOR_ARG(const T, x),
                             OCL_TENSOR_ARG(float, part), bn_t q,
                             __local float *ln, __local float *lm,
                             __local float *lq, __local float *lx)
{
  IDX lid = (IDX)get_local_id(0), ls = (IDX)get_local_size(0);
  IDX g = (IDX)get_group_id(0);
  IDX c = g % q.depth, s = g / q.depth;
  const __global T *xp = OCL_PTR(const T, x);
  IDX r0, r1, step;
  bn_items(&q, s, lid, ls, &r0, &r1, &step);
  float n = 0.0f, mean = 0.0f, m2 = 0.0f, sum = 0.0f;
  float pivot = bn_pivot(xp, &q, c);
  bn_pos_t pos = bn_pos(&q, r0);
  if (q.run > 0) {
    /* A CPU core's contiguous run, in segments within one image: two
     * passes over it (cached), no division per element. */
    bn_pos_t start = pos;
    float lane_shifted[BN_LANES] = {0}, lane_sum[BN_LANES] = {0},
          lane_m2[BN_LANES] = {0};
    for (IDX r = r0; r < r1;) {
      IDX seg = min(r1 - r, q.inner - pos.i), base = bn_pos_at(&q, &pos, c);
      bn_lanes_sums(xp + base, seg, pivot, lane_shifted, lane_sum);
      r += seg;
      bn_advance(&q, &pos, seg);
    }
    n = (float)(r1 > r0 ? r1 - r0 : 0);
    sum = bn_lanes_total(lane_sum);
    mean = n > 0.0f ? bn_lanes_total(lane_shifted) / n : 0.0f;
    pos = start;
    for (IDX r = r0; r < r1;) {
      IDX seg = min(r1 - r, q.inner - pos.i), base = bn_pos_at(&q, &pos, c);
      bn_lanes_m2(xp + base, seg, pivot, mean, lane_m2);
      r += seg;
      bn_advance(&q, &pos, seg);
    }
    m2 = bn_lanes_total(lane_m2);
  } else {
    for (IDX r = r0; r < r1; r += step, bn_advance(&q, &pos, step)) {
      float v = LOAD(xp, bn_pos_at(&q, &pos, c));
      welford(&n, &mean, &m2, v - pivot);
      sum += v;
    }
  }
  ln[lid] = n;
  lm[lid] = mean;
  lq[lid] = m2;
  lx[lid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  tree_stats(0, lid, ls, q.top, 1, ln, lm, lq, lx);
  if (lid == 0) {
    __global float *pp = OCL_PTR(float, part);
    pp[s * q.depth + c] = lm[0];
    pp[(q.slices + s) * q.depth + c] = lq[0];
    pp[(2 * q.slices + s) * q.depth + c] = lx[0];
  }
}

/* A work-group per channel: the slices' partials merged (slice s holds
 * min(slice, rest - s * slice) elements), then the outputs. Training: the
 * batch mean and biased variance go to saved_mean/saved_var
 * (reserve_space_1/2: our gradient reads them back), the Bessel-corrected
 * variance to batch_var; with exponential_avg_factor != 1 both running
 * statistics blend the incoming ones (TensorFlow's CPU functor). An empty
 * x gives NaN statistics, as TensorFlow does. The mean of x - pivot also
 * goes to part[3 * slices * depth + c] for bn_apply. */
__kernel void bn_fold_stats(OCL_TENSOR_ARG(const T, x),
                            OCL_TENSOR_ARG(float, part),
                            OCL_TENSOR_ARG(const float, mean_in),
                            OCL_TENSOR_ARG(const float, var_in),
                            OCL_TENSOR_ARG(float, batch_mean),
                            OCL_TENSOR_ARG(float, batch_var),
                            OCL_TENSOR_ARG(float, saved_mean),
                            OCL_TENSOR_ARG(float, saved_var), bn_t q,
                            float factor, __local float *ln,
                            __local float *lm, __local float *lq,
                            __local float *lx)
{
  IDX lid = (IDX)get_local_id(0), ls = (IDX)get_local_size(0);
  IDX c = (IDX)get_group_id(0);
  __global float *pp = OCL_PTR(float, part);
  float n = 0.0f, mean = 0.0f, m2 = 0.0f, sum = 0.0f;
  for (IDX s = lid; s < q.slices; s += ls) {
    IDX count = min(q.slice, q.rest - s * q.slice);
    chan(&n, &mean, &m2, (float)count, pp[s * q.depth + c],
         pp[(q.slices + s) * q.depth + c]);
    sum += pp[(2 * q.slices + s) * q.depth + c];
  }
  ln[lid] = n;
  lm[lid] = mean;
  lq[lid] = m2;
  lx[lid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  tree_stats(0, lid, ls, q.top, 1, ln, lm, lq, lx);
  if (lid != 0)
    return;
  float m = NAN, v = NAN, new_mean = NAN, new_var = NAN;
  if (q.rest > 0) {
    /* The mean from the plain sum: the pivot's sum with the mean of
     * x - pivot would lose ulps of the pivot when the mean is near 0. */
    m = lx[0] / (float)q.rest;
    v = lq[0] / (float)q.rest;
    pp[3 * q.slices * q.depth + c] = lm[0];
    float adjust = (float)q.rest / (float)(q.rest > 1 ? q.rest - 1 : 1);
    new_mean = m;
    new_var = v * adjust;
    if (factor != 1.0f) {
      float keep = 1.0f - factor;
      new_mean = keep * OCL_PTR(const float, mean_in)[c] + factor * m;
      new_var = keep * OCL_PTR(const float, var_in)[c] + (factor * adjust) * v;
    }
  }
  OCL_PTR(float, batch_mean)[c] = new_mean;
  OCL_PTR(float, batch_var)[c] = new_var;
  OCL_PTR(float, saved_mean)[c] = m;
  OCL_PTR(float, saved_var)[c] = v;
}

/* y = (x - mean) * scale / sqrt(var + epsilon) + offset, centred first so
 * that a large mean does not cancel the normalised value away. In training
 * (pivoted) `mean` is the mean of x - pivot (bn_fold_stats): (x - pivot) -
 * mean is then exact to a few ulps of the spread, not of the mean. */
static void bn_apply_one(const __global T *xp, __global T *yp,
                         const __global float *mean,
                         const __global float *var,
                         const __global float *scale,
                         const __global float *offset, const bn_t *q,
                         float epsilon, int pivoted, IDX i, IDX c)
{
  float k = scale[c] * rsqrt(var[c] + epsilon);
  float v = LOAD(xp, i);
  if (pivoted)
    v -= bn_pivot(xp, q, c);
  v -= mean[c];
  STORE(yp, i, v * k + offset[c]);
}

#define BN_APPLY_ARGS                                                   \
  OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y),                     \
      OCL_TENSOR_ARG(const float, mean), OCL_TENSOR_ARG(const float, var), \
      OCL_TENSOR_ARG(const float, scale),                               \
      OCL_TENSOR_ARG(const float, offset), bn_t q, float epsilon, int pivoted
/* bn_apply_rows' arguments: BN_APPLY_ARGS, restrict (y may be x itself, a
 * forwarded input, which index-for-index element-wise code tolerates). */
#define BN_APPLY_ROW_ARGS                                                   \
  BN_ROW_ARG(const T, x), BN_ROW_ARG(T, y), BN_ROW_ARG(const float, mean), \
      BN_ROW_ARG(const float, var), BN_ROW_ARG(const float, scale),        \
      BN_ROW_ARG(const float, offset), bn_t q, float epsilon, int pivoted
#define BN_APPLY_PASS                                                     \
  OCL_PTR(const T, x), OCL_PTR(T, y), OCL_PTR(const float, mean),         \
      OCL_PTR(const float, var), OCL_PTR(const float, scale),             \
      OCL_PTR(const float, offset), &q, epsilon, pivoted

__kernel void bn_apply(BN_APPLY_ARGS)
{
  IDX i = (IDX)get_global_id(0);
  OCL_GUARD(i, q.count);
  bn_apply_one(BN_APPLY_PASS, i, (i / q.inner) % q.depth);
}

/* The CPU shape: a work-item per row of contiguous elements, the depth
 * channels of one position (channels last) or one channel's run (first),
 * with no index division per element. q.count counts rows. */
__kernel void bn_apply_rows(BN_APPLY_ROW_ARGS)
{
  IDX row = (IDX)get_global_id(0);
  OCL_GUARD(row, q.count);
  if (q.inner == 1) {
    for (IDX j = 0; j < q.depth; j++)
      bn_apply_one(BN_APPLY_PASS, row * q.depth + j, j);
    return;
  }
  /* One channel: its coefficients once. */
  IDX c = row % q.depth;
  const __global T *xp = OCL_PTR(const T, x);
  __global T *yp = OCL_PTR(T, y);
  float k = OCL_PTR(const float, scale)[c] *
            rsqrt(OCL_PTR(const float, var)[c] + epsilon);
  float pivot = pivoted ? bn_pivot(xp, &q, c) : 0.0f;
  float m = OCL_PTR(const float, mean)[c];
  float b = OCL_PTR(const float, offset)[c];
  for (IDX i = row * q.inner, end = i + q.inner; i < end; i++)
    STORE(yp, i, ((LOAD(xp, i) - pivot) - m) * k + b);
}

/* ---- Gradient sums: sum(dy) and sum(dy * (x - mean)) -------------------- */

static void tree_sums(IDX lane, IDX k, IDX n, IDX top, IDX stride,
                      __local float *la, __local float *lb)
{
  IDX me = lane + k * stride;
  for (IDX step = top / 2; step > 0; step /= 2) {
    if (k < step && k + step < n) {
      IDX o = me + step * stride;
      la[me] += la[o];
      lb[me] += lb[o];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

/* The gradient's bn_stats_last: part [2][slices][depth] holds sum(dy) and
 * sum(dy * (x - mean)). */
__kernel void bn_sums_last(OCL_TENSOR_ARG(const T, dy),
                           OCL_TENSOR_ARG(const T, x),
                           OCL_TENSOR_ARG(const float, mean),
                           OCL_TENSOR_ARG(float, part), bn_t q,
                           __local float *la, __local float *lb)
{
  IDX lid = (IDX)get_local_id(0), g = (IDX)get_group_id(0);
  IDX tile = g % q.tiles, s = g / q.tiles;
  IDX tc = lid % q.tile_c, tr = lid / q.tile_c;
  IDX c = tile * q.tile_c + tc;
  bool active = tr < q.tile_r && c < q.depth;
  const __global T *dyp = OCL_PTR(const T, dy);
  const __global T *xp = OCL_PTR(const T, x);
  IDX r0, r1, step;
  bn_items(&q, s, tr, q.tile_r, &r0, &r1, &step);
  float a = 0.0f, b = 0.0f;
  if (active) {
    float m = OCL_PTR(const float, mean)[c];
    for (IDX r = r0; r < r1; r += step) {
      IDX i = r * q.depth + c;
      float d = LOAD(dyp, i);
      a += d;
      b += d * (LOAD(xp, i) - m);
    }
  }
  la[lid] = a;
  lb[lid] = b;
  barrier(CLK_LOCAL_MEM_FENCE);
  tree_sums(tc, active ? tr : q.top, q.tile_r, q.top, q.tile_c, la, lb);
  if (active && tr == 0) {
    __global float *pp = OCL_PTR(float, part);
    pp[s * q.depth + c] = la[lid];
    pp[(q.slices + s) * q.depth + c] = lb[lid];
  }
}

/* The CPU shape, channels last, as bn_stats_rows: part's sum(dy) and
 * sum(dy * (x - mean)) rows of slice s. */
__kernel void bn_sums_rows(BN_ROW_ARG(const T, dy), BN_ROW_ARG(const T, x),
                           BN_ROW_ARG(const float, mean),
                           BN_ROW_ARG(float, part), bn_t q)
{
  IDX s = (IDX)get_global_id(0);
  if (s >= q.slices)
    return;
  const __global T *dyp = OCL_PTR(const T, dy);
  const __global T *xp = OCL_PTR(const T, x);
  const __global float *m = OCL_PTR(const float, mean);
  __global float *pp = OCL_PTR(float, part);
  __global float *a = pp + s * q.depth;
  __global float *b = pp + (q.slices + s) * q.depth;
  IDX r0 = s * q.slice, r1 = min(r0 + q.slice, q.rest);
  for (IDX c = 0; c < q.depth; c++) {
    a[c] = 0.0f;
    b[c] = 0.0f;
  }
  for (IDX r = r0; r < r1; r++) {
    const __global T *dyr = dyp + r * q.depth, *xr = xp + r * q.depth;
    for (IDX c = 0; c < q.depth; c++) {
      float d = LOAD(dyr, c);
      a[c] += d;
      b[c] += d * (LOAD(xr, c) - m[c]);
    }
  }
}

__kernel void bn_sums_first(OCL_TENSOR_ARG(const T, dy),
                            OCL_TENSOR_ARG(const T, x),
                            OCL_TENSOR_ARG(const float, mean),
                            OCL_TENSOR_ARG(float, part), bn_t q,
                            __local float *la, __local float *lb)
{
  IDX lid = (IDX)get_local_id(0), ls = (IDX)get_local_size(0);
  IDX g = (IDX)get_group_id(0);
  IDX c = g % q.depth, s = g / q.depth;
  const __global T *dyp = OCL_PTR(const T, dy);
  const __global T *xp = OCL_PTR(const T, x);
  IDX r0, r1, step;
  bn_items(&q, s, lid, ls, &r0, &r1, &step);
  float m = OCL_PTR(const float, mean)[c];
  float a = 0.0f, b = 0.0f;
  bn_pos_t pos = bn_pos(&q, r0);
  if (q.run > 0) {
    /* A CPU core's contiguous run, in segments within one image. */
    float lane_a[BN_LANES] = {0}, lane_b[BN_LANES] = {0};
    for (IDX r = r0; r < r1;) {
      IDX seg = min(r1 - r, q.inner - pos.i), base = bn_pos_at(&q, &pos, c);
      bn_lanes_grad(dyp + base, xp + base, seg, m, lane_a, lane_b);
      r += seg;
      bn_advance(&q, &pos, seg);
    }
    a = bn_lanes_total(lane_a);
    b = bn_lanes_total(lane_b);
  } else {
    /* On a GPU one element at a time: work-items interleave. */
    for (IDX r = r0; r < r1; r += step, bn_advance(&q, &pos, step)) {
      IDX i = bn_pos_at(&q, &pos, c);
      float d = LOAD(dyp, i);
      a += d;
      b += d * (LOAD(xp, i) - m);
    }
  }
  la[lid] = a;
  lb[lid] = b;
  barrier(CLK_LOCAL_MEM_FENCE);
  tree_sums(0, lid, ls, q.top, 1, la, lb);
  if (lid == 0) {
    __global float *pp = OCL_PTR(float, part);
    pp[s * q.depth + c] = la[0];
    pp[(q.slices + s) * q.depth + c] = lb[0];
  }
}

/* A work-group per channel: offset_backprop = sum(dy), scale_backprop =
 * sum(dy * (x - mean)) / sqrt(var + epsilon); zero for an empty x. */
__kernel void bn_fold_sums(OCL_TENSOR_ARG(const float, part),
                           OCL_TENSOR_ARG(const float, var),
                           OCL_TENSOR_ARG(float, scale_backprop),
                           OCL_TENSOR_ARG(float, offset_backprop), bn_t q,
                           float epsilon, __local float *la,
                           __local float *lb)
{
  IDX lid = (IDX)get_local_id(0), ls = (IDX)get_local_size(0);
  IDX c = (IDX)get_group_id(0);
  const __global float *pp = OCL_PTR(const float, part);
  float a = 0.0f, b = 0.0f;
  for (IDX s = lid; s < q.slices; s += ls) {
    a += pp[s * q.depth + c];
    b += pp[(q.slices + s) * q.depth + c];
  }
  la[lid] = a;
  lb[lid] = b;
  barrier(CLK_LOCAL_MEM_FENCE);
  tree_sums(0, lid, ls, q.top, 1, la, lb);
  if (lid != 0)
    return;
  float inv = rsqrt(OCL_PTR(const float, var)[c] + epsilon);
  OCL_PTR(float, offset_backprop)[c] = q.rest == 0 ? 0.0f : la[0];
  OCL_PTR(float, scale_backprop)[c] = q.rest == 0 ? 0.0f : lb[0] * inv;
}

static void bn_grad_apply_one(const __global T *dyp, const __global T *xp,
                              const __global float *mean,
                              const __global float *var,
                              const __global float *scale,
                              const __global float *scale_backprop,
                              const __global float *offset_backprop,
                              __global T *dxp, const bn_t *q, float epsilon,
                              int training, IDX i, IDX c)
{
  float inv = rsqrt(var[c] + epsilon);
  float g = scale[c] * inv;
  float d = LOAD(dyp, i);
  float v;
  if (training) {
    float n = (float)q->rest;
    float mean_dy = offset_backprop[c] / n;
    float k = scale_backprop[c] * inv / n;
    float xc = LOAD(xp, i) - mean[c];
    v = g * ((d - mean_dy) - xc * k);
  } else {
    v = d * g;
  }
  STORE(dxp, i, v);
}

#define BN_GRAD_APPLY_ARGS                                                 \
  OCL_TENSOR_ARG(const T, dy), OCL_TENSOR_ARG(const T, x),                 \
      OCL_TENSOR_ARG(const float, mean), OCL_TENSOR_ARG(const float, var), \
      OCL_TENSOR_ARG(const float, scale),                                  \
      OCL_TENSOR_ARG(const float, scale_backprop),                         \
      OCL_TENSOR_ARG(const float, offset_backprop), OCL_TENSOR_ARG(T, dx), \
      bn_t q, float epsilon, int training
/* bn_grad_apply_rows' arguments: BN_GRAD_APPLY_ARGS, restrict (as
 * BN_APPLY_ROW_ARGS). */
#define BN_GRAD_APPLY_ROW_ARGS                                            \
  BN_ROW_ARG(const T, dy), BN_ROW_ARG(const T, x),                        \
      BN_ROW_ARG(const float, mean), BN_ROW_ARG(const float, var),        \
      BN_ROW_ARG(const float, scale),                                     \
      BN_ROW_ARG(const float, scale_backprop),                            \
      BN_ROW_ARG(const float, offset_backprop), BN_ROW_ARG(T, dx), bn_t q, \
      float epsilon, int training
#define BN_GRAD_APPLY_PASS                                                  \
  OCL_PTR(const T, dy), OCL_PTR(const T, x), OCL_PTR(const float, mean),    \
      OCL_PTR(const float, var), OCL_PTR(const float, scale),               \
      OCL_PTR(const float, scale_backprop),                                 \
      OCL_PTR(const float, offset_backprop), OCL_PTR(T, dx), &q, epsilon,   \
      training

/* x_backprop. Training: scale / sqrt(var + eps) * (dy - mean(dy) - (x -
 * mean) * mean(dy * (x - mean)) / (var + eps)), with the means from the
 * folded sums; inference: dy * scale / sqrt(var + eps). */
__kernel void bn_grad_apply(BN_GRAD_APPLY_ARGS)
{
  IDX i = (IDX)get_global_id(0);
  OCL_GUARD(i, q.count);
  bn_grad_apply_one(BN_GRAD_APPLY_PASS, i, (i / q.inner) % q.depth);
}

/* The CPU shape, as bn_apply_rows. */
__kernel void bn_grad_apply_rows(BN_GRAD_APPLY_ROW_ARGS)
{
  IDX row = (IDX)get_global_id(0);
  OCL_GUARD(row, q.count);
  /* Two loops, so that the channel index is the loop's own (contiguous
   * loads of the per-channel terms, where a select between the two made
   * gathers). */
  if (q.inner == 1) {
    for (IDX j = 0; j < q.depth; j++)
      bn_grad_apply_one(BN_GRAD_APPLY_PASS, row * q.depth + j, j);
    return;
  }
  IDX c = row % q.depth;
  for (IDX j = 0; j < q.inner; j++)
    bn_grad_apply_one(BN_GRAD_APPLY_PASS, row * q.inner + j, c);
}
