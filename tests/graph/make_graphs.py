#!/usr/bin/env python3
"""Writes the GraphDefs of tests/graph/data/ (binary protobuf), built with
TensorFlow's own graph construction so they carry its attributes, defaults,
versions and function library exactly as Grappler would hand them over.

    .venv-tf2.21/bin/python tests/graph/make_graphs.py tests/graph/data

Only device strings are set (no device is needed to build a graph). Each
graph's node names are fixed, the C tests (test_graph.c) refer to them."""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402

OPENCL = "/job:localhost/replica:0/task:0/device:OPENCL:0"
CPU = "/job:localhost/replica:0/task:0/device:CPU:0"


def variables(device):
    g = tf.Graph()
    with g.as_default(), tf.device(device):
        raw = tf.raw_ops
        v = raw.VarHandleOp(dtype=tf.float32, shape=[3], shared_name="v", name="v")
        it = raw.VarHandleOp(dtype=tf.int64, shape=[], shared_name="it", name="it")
        x = tf.constant([1.0, 2.0, 3.0], name="x")
        first = raw.AssignVariableOp(resource=v, value=x, name="init")
        with tf.control_dependencies([first]):
            add = raw.AssignAddVariableOp(resource=v, value=x, name="assign_add")
        half = x * 0.5
        with tf.control_dependencies([add]):
            sub = raw.AssignSubVariableOp(resource=v, value=half, name="assign_sub")
        step = raw.AssignAddVariableOp(resource=it, value=tf.constant(1, tf.int64),
                                       name="count")
        with tf.control_dependencies([sub, step]):
            raw.ReadVariableOp(resource=v, dtype=tf.float32, name="result")
        # An int32 update: the plugin has no int32 variable kernels, so the
        # pass must leave it (and say why).
        w = raw.VarHandleOp(dtype=tf.int32, shape=[], shared_name="w", name="w")
        raw.AssignAddVariableOp(resource=w, value=tf.constant(2), name="assign_int32")

        # A function in the library, so the graph has one to keep.
        @tf.function
        def double(t):
            return t * 2.0
        double.get_concrete_function(tf.TensorSpec([3], tf.float32)).add_to_graph(g)
    return g.as_graph_def()


def apply_ops():
    g = tf.Graph()
    raw = tf.raw_ops
    with g.as_default(), tf.device(OPENCL):
        def var(name):
            return raw.VarHandleOp(dtype=tf.float32, shape=[4], shared_name=name, name=name)
        c = {n: tf.constant(v, name=n) for n, v in
             [("lr", 0.1), ("momentum", 0.9), ("beta1", 0.9), ("beta2", 0.999),
              ("beta1_power", 0.81), ("beta2_power", 0.998), ("epsilon", 1e-7)]}
        grad = tf.constant([0.5, -1.0, 2.0, 0.25], name="grad")
        gate = tf.no_op(name="gate")
        gd = var("gd")
        with tf.control_dependencies([gate]):
            raw.ResourceApplyGradientDescent(var=gd, alpha=c["lr"], delta=grad,
                                             name="apply_gd")
        for nesterov in (False, True):
            suffix = "_nesterov" if nesterov else ""
            raw.ResourceApplyMomentum(var=var("mom_var" + suffix), accum=var("mom_accum" + suffix),
                                      lr=c["lr"], grad=grad, momentum=c["momentum"],
                                      use_nesterov=nesterov, name="apply_momentum" + suffix)
            raw.ResourceApplyAdam(var=var("adam_var" + suffix), m=var("adam_m" + suffix),
                                  v=var("adam_v" + suffix), beta1_power=c["beta1_power"],
                                  beta2_power=c["beta2_power"], lr=c["lr"], beta1=c["beta1"],
                                  beta2=c["beta2"], epsilon=c["epsilon"], grad=grad,
                                  use_nesterov=nesterov, name="apply_adam" + suffix)
        with tf.control_dependencies([g.get_operation_by_name("apply_adam")]):
            tf.no_op(name="after_adam")
    return g.as_graph_def()


def dense():
    g = tf.Graph()
    with g.as_default(), tf.device(OPENCL):
        x = tf.constant(1.0, shape=[2, 8], name="x")
        w = tf.constant(0.5, shape=[8, 4], name="w")
        b = tf.constant(0.1, shape=[4], name="b")
        # MatMul + BiasAdd + Relu: fuses into the Relu.
        tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w, name="mm_relu"), b, name="ba_relu"),
                   name="relu")
        # + LeakyRelu(alpha 0.3).
        tf.nn.leaky_relu(tf.nn.bias_add(tf.matmul(x, w, transpose_b=False, name="mm_leaky"), b,
                                        name="ba_leaky"), alpha=0.3, name="leaky")
        # MatMul + BiasAdd alone.
        tf.nn.bias_add(tf.matmul(x, w, name="mm_plain"), b, name="ba_plain")
        # The MatMul has a second consumer: nothing fuses.
        mm_shared = tf.matmul(x, w, name="mm_shared")
        tf.nn.bias_add(mm_shared, b, name="ba_shared")
        tf.identity(mm_shared, name="mm_shared_reader")
        # The C tests keep "ba_fetched": the Tanh cannot take it in, but the
        # MatMul fuses into it under its name.
        tf.tanh(tf.nn.bias_add(tf.matmul(x, w, name="mm_fetched"), b, name="ba_fetched"),
                name="tanh_fetched")
        # A control dependency on the MatMul: it must stay.
        mm_ctrl = tf.matmul(x, w, name="mm_ctrl")
        with tf.control_dependencies([mm_ctrl]):
            tf.no_op(name="after_mm_ctrl")
        tf.nn.sigmoid(tf.nn.bias_add(mm_ctrl, b, name="ba_ctrl"), name="sigmoid_ctrl")
        # Conv2D + BiasAdd + Relu6 (NHWC).
        img = tf.constant(1.0, shape=[1, 5, 5, 2], name="img")
        f = tf.constant(0.2, shape=[3, 3, 2, 4], name="f")
        tf.nn.relu6(tf.nn.bias_add(tf.nn.conv2d(img, f, strides=1, padding="SAME", name="conv"),
                                   b, name="ba_conv"), name="relu6")
        # Conv2D + BiasAdd + Elu with a control input on the Elu.
        ba_elu = tf.nn.bias_add(tf.nn.conv2d(img, f, strides=1, padding="VALID",
                                             name="conv_elu"), b, name="ba_elu")
        with tf.control_dependencies([g.get_operation_by_name("relu6")]):
            tf.nn.elu(ba_elu, name="elu")
    with g.as_default(), tf.device(CPU):
        # On the CPU: the pass must not touch it.
        tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w, name="mm_cpu"), b, name="ba_cpu"),
                   name="relu_cpu")
    return g.as_graph_def()


def elementwise():
    """Element-wise chains for the element-wise fusion: what fuses, what
    must stay (shared, controlled, fetched, other dtypes, the CPU's), and a
    tree too wide for one program."""
    g = tf.Graph()
    f32, f16 = tf.float32, tf.float16
    with g.as_default(), tf.device(OPENCL):
        ph = tf.compat.v1.placeholder
        x = ph(f32, [4, 3], name="x")
        y = ph(f32, [4, 3], name="y")
        grad = ph(f32, [4, 3], name="grad")
        m = ph(f32, [4, 3], name="m")
        # Keras' Adam: m + (grad - m) * 0.1 -> one node under "am_add".
        beta = tf.constant(0.1, name="am_beta")
        tf.add(m, tf.multiply(tf.subtract(grad, m, name="am_sub"), beta, name="am_mul"),
               name="am_add")
        # A shared intermediate stays; each reader's chain fuses on its own.
        s = tf.subtract(x, y, name="sh_sub")
        two = tf.constant(2.0, name="two")
        tf.nn.relu(tf.multiply(s, two, name="sh_mul"), name="sh_relu")
        tf.tanh(tf.add(s, 1.0, name="sh_add"), name="sh_tanh")
        # A control consumer keeps cd_mul; its readers fuse.
        c1 = tf.multiply(x, y, name="cd_mul")
        with tf.control_dependencies([c1]):
            tf.no_op(name="after_cd")
        tf.add(tf.exp(c1, name="cd_exp"), 1.0, name="cd_add")
        # A control input on an inner op keeps it; on the root it stays.
        gate = tf.no_op(name="gate")
        with tf.control_dependencies([gate]):
            ci = tf.subtract(x, y, name="ci_sub")
        tf.sqrt(tf.abs(ci, name="ci_abs"), name="ci_sqrt")
        inner = tf.multiply(x, y, name="cr_mul")
        with tf.control_dependencies([gate]):
            tf.sigmoid(inner, name="cr_sigmoid")
        # The C tests keep "ft_add": it fuses with its producer under its
        # name, the Relu reading it stays apart.
        ft = tf.add(tf.multiply(x, y, name="ft_mul"), y, name="ft_add")
        tf.nn.relu(ft, name="ft_relu")
        # float -> half -> float: one program of two dtypes.
        half = tf.cast(x, f16, name="mx_cast")
        tf.cast(tf.multiply(half, tf.constant(0.5, f16, name="mx_half"), name="mx_mul"),
                f32, name="mx_back")
        # int32 and float64 chains are not the op's.
        i = ph(tf.int32, [3], name="i")
        tf.add(tf.multiply(i, 2, name="int_mul"), 1, name="int_add")
        d = ph(tf.float64, [3], name="d")
        tf.add(tf.multiply(d, d, name="dbl_mul"), 1.0, name="dbl_add")
        # Broadcasting inputs: [3,1] + [4] -> [3,4].
        bx = ph(f32, [3, 1], name="bx")
        by = ph(f32, [4], name="by")
        tf.nn.relu(tf.add(bx, by, name="bc_add"), name="bc_relu")
        # Ten inputs: more than one program takes.
        acc = ph(f32, [4, 3], name="w0")
        for k in range(1, 10):
            acc = tf.add(acc, ph(f32, [4, 3], name=f"w{k}"), name=f"wide_{k}")
        # Keras' Adam step size from the int64 step counter: the Cast read
        # by both Pows is computed once inside one region, the int64 add
        # with it.
        it = ph(tf.int64, [], name="it")
        lr = ph(f32, [], name="lr")
        step = tf.cast(tf.add(it, tf.constant(1, tf.int64, name="one64"), name="st_add"),
                       f32, name="st_cast")
        b1 = tf.pow(tf.constant(0.9, name="beta1"), step, name="st_pow1")
        b2 = tf.pow(tf.constant(0.999, name="beta2"), step, name="st_pow2")
        tf.math.divide(lr * tf.sqrt(1.0 - b2, name="st_sqrt"), 1.0 - b1, name="st_alpha")
        # A value read twice by one op.
        dd = tf.subtract(x, y, name="dd_sub")
        tf.multiply(dd, dd, name="dd_mul")
        # A one-element value with a pow in it stays out of a region of many
        # elements (its own region, computed once); a cheap one joins.
        t2 = ph(f32, [], name="t2")
        sc = tf.subtract(1.0, tf.pow(0.9, t2, name="sc_pow"), name="sc_sub")
        tf.add(tf.multiply(x, sc, name="sc_mul"), y, name="sc_add")
        tf.add(tf.multiply(x, tf.add(t2, 1.0, name="ch_add"), name="ch_mul"), y,
               name="ch_out")
        # A scalar variable's read counts as one element too.
        hv = tf.raw_ops.VarHandleOp(dtype=f32, shape=[], shared_name="hv", name="hv")
        hr = tf.raw_ops.ReadVariableOp(resource=hv, dtype=f32, name="hv_read")
        tf.add(x, tf.exp(hr, name="vr_exp"), name="vr_add")
        # AddN: a chain of adds in its inputs' order, with its producers;
        # alone it fuses too (n - 1 adds); beyond 8 inputs it stays.
        tf.add_n([tf.multiply(x, y, name="an_mul"), tf.exp(x, name="an_exp"), grad],
                 name="an_sum")
        tf.add_n([x, y, m], name="an_alone")
        tf.add_n([ph(f32, [4, 3], name=f"n{k}") for k in range(9)], name="an_nine")
        # An op the program cannot hold splits a chain.
        sm = tf.nn.softmax(tf.multiply(x, 3.0, name="sm_mul"), name="sm")
        tf.negative(tf.square(sm, name="sm_square"), name="sm_neg")
    with g.as_default(), tf.device(CPU):
        tf.nn.relu(tf.add(x, y, name="cpu_add"), name="cpu_relu")
    return g.as_graph_def()


def tiles():
    """Element-wise chains that read Tiles: one only they read ("t_out"'s,
    which goes), one read outside too ("shared_tile", which stays), one on
    the CPU and one of multiples that are not a Const (both stay
    Tiles)."""
    g = tf.Graph()
    f32 = tf.float32
    with g.as_default(), tf.device(OPENCL):
        ph = tf.compat.v1.placeholder
        x = ph(f32, [4, 5, 6, 8], name="x")
        v = ph(f32, [1, 1, 1, 8], name="v")
        reps = tf.constant([4, 5, 6, 1], name="reps")
        t = tf.tile(v, reps, name="tile")
        tf.add(tf.multiply(tf.subtract(x, t, name="t_sub"), 2.0, name="t_mul"), 1.0,
               name="t_out")
        shared = tf.tile(v, reps, name="shared_tile")
        tf.nn.relu(tf.subtract(tf.multiply(x, shared, name="s_mul"), 1.0, name="s_sub"),
                   name="s_out")
        tf.identity(shared, name="outside")
        with tf.device(CPU):
            cpu_tile = tf.tile(v, reps, name="cpu_tile")
        tf.tanh(tf.add(x, cpu_tile, name="c_add"), name="c_out")
        dyn = ph(tf.int32, [4], name="dyn_reps")
        dyn_tile = tf.tile(v, dyn, name="dyn_tile")
        tf.exp(tf.add(x, dyn_tile, name="d_add"), name="d_out")
    return g.as_graph_def()


def pool_relu():
    """ReluGrad(MaxPoolGrad(r, y, dy), r) where windows do not overlap
    ("g_out": one MaxPoolGrad with the ReLU attribute), and three that
    stay: overlapping windows ("o_out"), features other than the pool's
    input ("f_out"), a MaxPoolGrad read twice ("s_out")."""
    g = tf.Graph()
    f32 = tf.float32
    with g.as_default(), tf.device(OPENCL):
        ph = tf.compat.v1.placeholder
        r = tf.nn.relu(ph(f32, [2, 8, 8, 3], name="x"), name="r")
        other = tf.nn.relu(ph(f32, [2, 8, 8, 3], name="x2"), name="other")
        y = ph(f32, [2, 4, 4, 3], name="y")
        dy = ph(f32, [2, 4, 4, 3], name="dy")
        y3 = ph(f32, [2, 3, 3, 3], name="y3")
        dy3 = ph(f32, [2, 3, 3, 3], name="dy3")
        mpg = tf.raw_ops.MaxPoolGrad
        rg = tf.raw_ops.ReluGrad
        two = dict(ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
        rg(gradients=mpg(orig_input=r, orig_output=y, grad=dy, name="g_pool", **two),
           features=r, name="g_out")
        rg(gradients=mpg(orig_input=r, orig_output=y3, grad=dy3, ksize=[1, 3, 3, 1],
                         strides=[1, 2, 2, 1], padding="VALID", name="o_pool"),
           features=r, name="o_out")
        rg(gradients=mpg(orig_input=r, orig_output=y, grad=dy, name="f_pool", **two),
           features=other, name="f_out")
        shared = mpg(orig_input=r, orig_output=y, grad=dy, name="s_pool", **two)
        rg(gradients=shared, features=r, name="s_out")
        tf.identity(shared, name="s_other")
    return g.as_graph_def()


def controlled():
    """Scalar Consts that wait for a node (gradient code's
    tf.control_dependencies, _SquareGrad's 2): one the chain can fold with
    the node it waits for ("cc_"), one read outside the chain too ("co_"),
    one waiting for a node outside the chain ("cg_")."""
    g = tf.Graph()
    f32 = tf.float32
    with g.as_default(), tf.device(OPENCL):
        ph = tf.compat.v1.placeholder
        x = ph(f32, [4, 3], name="x")
        y = ph(f32, [4, 3], name="y")
        grad = tf.multiply(x, 0.5, name="cc_grad")
        with tf.control_dependencies([grad]):
            two = tf.constant(2.0, name="cc_two")
        tf.multiply(grad, tf.multiply(y, two, name="cc_inner"), name="cc_out")
        grad = tf.multiply(x, 0.25, name="co_grad")
        with tf.control_dependencies([grad]):
            two = tf.constant(2.0, name="co_two")
        tf.multiply(grad, tf.multiply(y, two, name="co_inner"), name="co_out")
        tf.identity(two, name="co_outside")
        gate = tf.no_op(name="gate")
        with tf.control_dependencies([gate]):
            three = tf.constant(3.0, name="cg_three")
        tf.add(tf.multiply(x, three, name="cg_mul"), y, name="cg_out")
    return g.as_graph_def()


def powers():
    """Pow by constants: a scalar 3 on OPENCL, in float and half (the pass
    rewrites these as Mul(x, Square(x)), which then fuse with their
    reader), and what stays a Pow: another exponent, a vector of 3s, and a
    cube on the CPU."""
    g = tf.Graph()
    f32, f16 = tf.float32, tf.float16
    with g.as_default(), tf.device(OPENCL):
        ph = tf.compat.v1.placeholder
        x = ph(f32, [4, 3], name="x")
        h = ph(f16, [4, 3], name="h")
        tf.add(tf.pow(x, 3.0, name="cube"), 1.0, name="cube_add")
        tf.add(tf.pow(h, tf.constant(3.0, f16), name="cube_half"),
               tf.constant(1.0, f16), name="cube_half_add")
        tf.pow(x, 2.5, name="other")
        tf.pow(x, tf.constant([3.0, 3.0, 3.0]), name="vector")
        with tf.device(CPU):
            tf.pow(x, 3.0, name="cpu_cube")
    return g.as_graph_def()


def while_loop():
    """A lowered while loop (Enter, Merge, Switch, LoopCond, NextIteration,
    Exit: what Grappler sees once TensorFlow lowered a While), as Keras'
    recurrent layers make it: the condition a LogicalAnd of int32
    comparisons, the body an element-wise cell update on a cycle through
    NextIteration. Outside it, LogicalAnds whose operands are not all int32
    comparisons."""
    g = tf.Graph()
    f32 = tf.float32
    tf.compat.v1.disable_control_flow_v2()
    try:
        with g.as_default(), tf.device(OPENCL):
            ph = tf.compat.v1.placeholder
            x = ph(f32, [4, 3], name="lx")
            c0 = ph(f32, [4, 3], name="lc")
            n = ph(tf.int32, [], name="ln")

            def cond(i, t, c):
                return tf.logical_and(tf.less(i, n, name="lp_less"),
                                      tf.less(t, 10, name="lp_less_1"), name="lp_and")

            def body(i, t, c):
                cell = tf.add(tf.multiply(c, tf.sigmoid(x, name="lp_sig"), name="lp_mul"),
                              tf.tanh(c, name="lp_tanh"), name="lp_add")
                return i + 1, t + 1, cell

            tf.compat.v1.while_loop(cond, body, [0, 0, c0], name="lp")
            flag = ph(tf.bool, [], name="flag")
            k = ph(tf.int32, [], name="k")
            big = ph(tf.int64, [], name="big")
            # Three terms: the outer And takes the labelled inner one.
            inner = tf.logical_and(tf.less(k, 3, name="k_less"),
                                   tf.greater(k, 0, name="k_greater"), name="k_and")
            tf.logical_or(inner, tf.equal(k, 7, name="k_equal"), name="k_or")
            # A bool placeholder and an int64 comparison are on the device.
            tf.logical_and(tf.less(k, 5, name="f_less"), flag, name="f_and")
            tf.logical_and(tf.less(big, 5, name="b_less"), tf.less(k, 6, name="b_less_1"),
                           name="b_and")
    finally:
        tf.compat.v1.enable_control_flow_v2()
    return g.as_graph_def()


def _hand_written():
    """An empty GraphDef and node(name, op, device, inputs, **attrs), which
    appends a node to it with AttrValue attributes."""
    from tensorflow.core.framework import graph_pb2
    gd = graph_pb2.GraphDef()

    def node(name, op, device, inputs=(), **attrs):
        n = gd.node.add(name=name, op=op, device=device)
        n.input.extend(inputs)
        for k, v in attrs.items():
            n.attr[k].CopyFrom(v)
        return n

    return gd, node


def parallel_concat():
    """ParallelConcatRemovePass's output, as placed on a TensorFlow without
    an OPENCL _ParallelConcatStart: Start and updates on the CPU, the
    Identity that reads Start's buffer on OPENCL (after the updates through
    a NoOp of grouped cross-device control edges). The node defs are
    written by hand: the pass's ops are internal, no Python API makes
    them."""
    from tensorflow.core.framework import attr_value_pb2, tensor_shape_pb2, types_pb2
    gd, node = _hand_written()

    f32 = attr_value_pb2.AttrValue(type=types_pb2.DT_FLOAT)
    shape = tensor_shape_pb2.TensorShapeProto(dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=s)
                                                   for s in (2, 3)])
    value = tf.make_tensor_proto([[1.0, 2.0, 3.0]], dtype=tf.float32)
    node("row", "Const", OPENCL, dtype=f32, value=attr_value_pb2.AttrValue(tensor=value))
    node("start", "_ParallelConcatStart", CPU, dtype=f32,
         shape=attr_value_pb2.AttrValue(shape=shape))
    for i in range(2):
        node(f"update_{i}", "_ParallelConcatUpdate", CPU, ["start", "row"], T=f32,
             loc=attr_value_pb2.AttrValue(i=i))
    node("group", "NoOp", CPU, ["^update_0", "^update_1"])
    node("stacked", "Identity", OPENCL, ["start", "^group"], T=f32)
    node("other", "Identity", OPENCL, ["row"], T=f32)
    return gd


def accumulate():
    """The memory optimizer's rewrite of an AddN of a, b, c (its scheduling
    pass, written as memory_optimizer.cc writes it), on OPENCL as "sum" and
    on the CPU as "cpu_sum"; "sum" waited for "pre" and "post". Written by
    hand: Grappler makes the rewrite only past a device's memory estimate,
    and reference ops have no Python API."""
    from tensorflow.core.framework import attr_value_pb2, tensor_shape_pb2, types_pb2
    gd, node = _hand_written()

    f32 = attr_value_pb2.AttrValue(type=types_pb2.DT_FLOAT)
    shape = attr_value_pb2.AttrValue(shape=tensor_shape_pb2.TensorShapeProto(
        dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=s) for s in (2, 3)]))

    def flag(v):
        return attr_value_pb2.AttrValue(b=v)

    for prefix, device in (("", OPENCL), ("cpu_", CPU)):
        for k, name in enumerate("abc"):
            value = tf.make_tensor_proto([[k + 1.0] * 3] * 2, dtype=tf.float32)
            node(prefix + name, "Const", device, dtype=f32,
                 value=attr_value_pb2.AttrValue(tensor=value))
        node(prefix + "pre", "NoOp", device)
        node(prefix + "post", "NoOp", device)
        x = prefix + "sum"
        node(x + "/tmp_var", "TemporaryVariable", device, ["^" + prefix + "pre", "^" + prefix + "a"],
             dtype=f32, shape=shape,
             var_name=attr_value_pb2.AttrValue(s=(x + "/tmp_var").encode()))
        node(x + "/tmp_var_zeros", "ZerosLike", device, [prefix + "a"], T=f32)
        node(x + "/tmp_var_initializer", "Assign", device,
             [x + "/tmp_var", x + "/tmp_var_zeros"], T=f32, use_locking=flag(False),
             validate_shape=flag(False))
        for k, name in enumerate("abc"):
            node(f"{x}/tmp_var_accum_{k}", "AssignAdd", device,
                 [x + "/tmp_var_initializer", prefix + name], T=f32, use_locking=flag(True))
        node(x, "DestroyTemporaryVariable", device,
             [x + "/tmp_var_initializer"] + [f"^{x}/tmp_var_accum_{k}" for k in range(3)]
             + ["^" + prefix + "post"],
             T=f32, var_name=attr_value_pb2.AttrValue(s=(x + "/tmp_var").encode()))
        node(prefix + "out", "Identity", device, [x], T=f32)
    return gd


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "data")
    os.makedirs(out, exist_ok=True)
    graphs = {
        "variables.pb": variables(OPENCL),
        "variables_cpu.pb": variables(CPU),
        "apply.pb": apply_ops(),
        "dense.pb": dense(),
        "parallel_concat.pb": parallel_concat(),
        "elementwise.pb": elementwise(),
        "while_loop.pb": while_loop(),
        "accumulate.pb": accumulate(),
        "tiles.pb": tiles(),
        "controlled.pb": controlled(),
        "powers.pb": powers(),
        "pool_relu.pb": pool_relu(),
    }
    for name, gd in graphs.items():
        data = gd.SerializeToString(deterministic=True)
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
        print(f"{name}: {len(gd.node)} nodes, {len(data)} bytes, "
              f"{len(gd.library.function)} functions")


if __name__ == "__main__":
    main()
