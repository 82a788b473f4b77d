/* Variable updates and the optimizers' fused update kernels.
 *
 * Built once per storage type: -DT=float|half|ushort (bfloat16)|double, and
 * -DT=uchar|ushort|uint|ulong -DT_IS_INT for every integer width (signed
 * and unsigned add alike in two's complement; only the assign updates are
 * built for them). Complex values add component-wise: complex64 runs the
 * float program over twice the elements, complex128 the double one. half
 * and bfloat16 are stored as such and computed in float, rounded to nearest
 * even on store.
 *
 * The optimizers follow TensorFlow's GPU kernels (training_ops_gpu.cu.cc)
 * formula for formula. Their scalar hyper-parameters are device tensors
 * read inside the kernel, never on the host: the host does not wait for
 * the device (lr or beta1_power may be the output of an earlier op). */
#include "common.clh"

#if defined(T_IS_HALF)
typedef float CT; /* compute type */
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) OCL_STORE_HALF(p, i, v)
#elif defined(T_IS_BFLOAT16)
typedef float CT;
#define LOAD(p, i) ocl_bf16_to_float((p)[i])
#define STORE(p, i, v) ((p)[i] = ocl_float_to_bf16(v))
#else
typedef T CT;
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (v))
#endif

/* var (op)= value over n elements. Integers wrap, as TensorFlow's: T is
 * unsigned for them, whose arithmetic is modular in OpenCL C. */
__kernel void assign_add(OCL_TENSOR_ARG(T, var), OCL_TENSOR_ARG(const T, value),
                         long n)
{
  __global T *v = OCL_PTR(T, var);
  OCL_FOR_FLAT(long, i, n)
  STORE(v, i, (CT)(LOAD(v, i) + LOAD(OCL_PTR(const T, value), i)));
}

__kernel void assign_sub(OCL_TENSOR_ARG(T, var), OCL_TENSOR_ARG(const T, value),
                         long n)
{
  __global T *v = OCL_PTR(T, var);
  OCL_FOR_FLAT(long, i, n)
  STORE(v, i, (CT)(LOAD(v, i) - LOAD(OCL_PTR(const T, value), i)));
}

#if defined(T_IS_FLOAT) || defined(T_IS_HALF)

/* var -= alpha * delta */
__kernel void apply_gradient_descent(OCL_TENSOR_ARG(T, var),
                                     OCL_TENSOR_ARG(const T, alpha),
                                     OCL_TENSOR_ARG(const T, delta), long n)
{
  __global T *w = OCL_PTR(T, var);
  CT lr = LOAD(OCL_PTR(const T, alpha), 0);
  OCL_FOR_FLAT(long, i, n)
  STORE(w, i, LOAD(w, i) - lr * LOAD(OCL_PTR(const T, delta), i));
}

/* accum = accum * momentum + grad;
 * var -= nesterov ? grad * lr + accum * momentum * lr : lr * accum */
__kernel void apply_momentum(OCL_TENSOR_ARG(T, var), OCL_TENSOR_ARG(T, accum),
                             OCL_TENSOR_ARG(const T, lr),
                             OCL_TENSOR_ARG(const T, grad),
                             OCL_TENSOR_ARG(const T, momentum), long n,
                             int use_nesterov)
{
  __global T *w = OCL_PTR(T, var);
  __global T *a = OCL_PTR(T, accum);
  CT lr_ = LOAD(OCL_PTR(const T, lr), 0);
  CT mom = LOAD(OCL_PTR(const T, momentum), 0);
  OCL_FOR_FLAT(long, i, n)
  {
    CT g = LOAD(OCL_PTR(const T, grad), i);
    CT acc = LOAD(a, i) * mom + g;
    CT step = use_nesterov ? g * lr_ + acc * mom * lr_ : lr_ * acc;
    STORE(a, i, acc);
    STORE(w, i, LOAD(w, i) - step);
  }
}

/* TensorFlow's ApplyKerasMomentum, which is Keras' SGD op for op:
 *   accum = accum * momentum - grad * lr
 *   var += nesterov ? accum * momentum - grad * lr : accum
 * No contraction: each product and difference rounds on its own, as
 * Keras' separate ops (and TensorFlow's CPU kernel) do. */
__kernel void apply_keras_momentum(OCL_TENSOR_ARG(T, var),
                                   OCL_TENSOR_ARG(T, accum),
                                   OCL_TENSOR_ARG(const T, lr),
                                   OCL_TENSOR_ARG(const T, grad),
                                   OCL_TENSOR_ARG(const T, momentum), long n,
                                   int use_nesterov)
{
#pragma OPENCL FP_CONTRACT OFF
  __global T *w = OCL_PTR(T, var);
  __global T *a = OCL_PTR(T, accum);
  CT lr_ = LOAD(OCL_PTR(const T, lr), 0);
  CT mom = LOAD(OCL_PTR(const T, momentum), 0);
  OCL_FOR_FLAT(long, i, n)
  {
    CT g_lr = LOAD(OCL_PTR(const T, grad), i) * lr_;
    CT acc = LOAD(a, i) * mom - g_lr;
    CT step = use_nesterov ? acc * mom - g_lr : acc;
    STORE(a, i, acc);
    STORE(w, i, LOAD(w, i) + step);
  }
}

/* TensorFlow's ApplyAdamKernel:
 *   mul_factor = lr * sqrt(1 - beta2_power) / (1 - beta1_power)
 *   m += (1 - beta1) * (g - m);  v += (1 - beta2) * (g * g - v)
 *   var -= mul_factor * (nesterov ? m * beta1 + (1 - beta1) * g : m)
 *          / (epsilon + sqrt(v)) */
__kernel void apply_adam(OCL_TENSOR_ARG(T, var), OCL_TENSOR_ARG(T, m),
                         OCL_TENSOR_ARG(T, v),
                         OCL_TENSOR_ARG(const T, beta1_power),
                         OCL_TENSOR_ARG(const T, beta2_power),
                         OCL_TENSOR_ARG(const T, lr),
                         OCL_TENSOR_ARG(const T, beta1),
                         OCL_TENSOR_ARG(const T, beta2),
                         OCL_TENSOR_ARG(const T, epsilon),
                         OCL_TENSOR_ARG(const T, grad), long n,
                         int use_nesterov)
{
  CT b1p = LOAD(OCL_PTR(const T, beta1_power), 0);
  CT b2p = LOAD(OCL_PTR(const T, beta2_power), 0);
  CT b1 = LOAD(OCL_PTR(const T, beta1), 0);
  CT eps = LOAD(OCL_PTR(const T, epsilon), 0);
  CT mul_factor = LOAD(OCL_PTR(const T, lr), 0) * sqrt((CT)1 - b2p) /
                  ((CT)1 - b1p);
  CT one_minus_beta1 = (CT)1 - b1;
  CT one_minus_beta2 = (CT)1 - LOAD(OCL_PTR(const T, beta2), 0);
  __global T *w = OCL_PTR(T, var);
  __global T *mp = OCL_PTR(T, m);
  __global T *vp = OCL_PTR(T, v);
  OCL_FOR_FLAT(long, i, n)
  {
    CT g = LOAD(OCL_PTR(const T, grad), i);
    CT m_i = LOAD(mp, i);
    CT v_i = LOAD(vp, i);
    m_i += one_minus_beta1 * (g - m_i);
    v_i += one_minus_beta2 * (g * g - v_i);
    CT num = use_nesterov ? m_i * b1 + one_minus_beta1 * g : m_i;
    STORE(w, i, LOAD(w, i) - mul_factor * num / (eps + sqrt(v_i)));
    STORE(mp, i, m_i);
    STORE(vp, i, v_i);
  }
}

/* Keras 3's Adam (keras/src/optimizers/adam.py) op for op, in its order and
 * rounding, as _TfoclKerasAdam (variables.c) computes it for tfocl's
 * Python side: the caller computes alpha = lr * sqrt(1 - beta_2 ** t) /
 * (1 - beta_1 ** t) and 1 - beta_1, 1 - beta_2 as Keras does, and
 *   m += (g - m) * one_minus_beta_1;  v += (g * g - v) * one_minus_beta_2
 *   var -= m * alpha / (sqrt(v) + epsilon)
 * with m and v the new values. Registered for float only, where the
 * separate roundings are Keras' own. No contraction: each product and sum
 * rounds on its own, as Keras' separate ops do. */
__kernel void keras_adam(OCL_TENSOR_ARG(T, var), OCL_TENSOR_ARG(T, m),
                         OCL_TENSOR_ARG(T, v), OCL_TENSOR_ARG(const T, alpha),
                         OCL_TENSOR_ARG(const T, one_minus_beta_1),
                         OCL_TENSOR_ARG(const T, one_minus_beta_2),
                         OCL_TENSOR_ARG(const T, epsilon),
                         OCL_TENSOR_ARG(const T, grad), long n)
{
#pragma OPENCL FP_CONTRACT OFF
  CT a = LOAD(OCL_PTR(const T, alpha), 0);
  CT c1 = LOAD(OCL_PTR(const T, one_minus_beta_1), 0);
  CT c2 = LOAD(OCL_PTR(const T, one_minus_beta_2), 0);
  CT eps = LOAD(OCL_PTR(const T, epsilon), 0);
  __global T *w = OCL_PTR(T, var);
  __global T *mp = OCL_PTR(T, m);
  __global T *vp = OCL_PTR(T, v);
  OCL_FOR_FLAT(long, i, n)
  {
    CT g = LOAD(OCL_PTR(const T, grad), i);
    CT m_i = LOAD(mp, i);
    CT v_i = LOAD(vp, i);
    m_i = m_i + (g - m_i) * c1;
    v_i = v_i + (g * g - v_i) * c2;
    STORE(w, i, LOAD(w, i) - m_i * a / (sqrt(v_i) + eps));
    STORE(mp, i, m_i);
    STORE(vp, i, v_i);
  }
}

#endif /* T_IS_FLOAT || T_IS_HALF */
