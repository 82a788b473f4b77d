"""Build-only ABI check: our C-clean headers (include/) against the wheel's
own headers (site-packages/tensorflow/include).

For every struct the wheel's header declares, the member list is parsed from
that header; two tiny programs (one compiled with -I <wheel include>, one
with -I include) print sizeof, offsetof and sizeof of every member, the
*_STRUCT_SIZE macros, enum values and SE_MAJOR/MINOR/PATCH; both outputs must
be equal. Skipped (not passed) without the wheel's headers or a compiler.
"""
import os
import re
import shutil
import subprocess
import tempfile

import numpy as np
import pytest

from conftest import REPO, has_variable_api

# Members TensorFlow appended in a release our headers already carry: a
# wheel older than that release declares the struct without them (its core's
# struct_size ends before them, and the plugin never writes past it). For such
# a wheel the members it declares are compared, and its *_STRUCT_SIZE against
# where its last member ends in ours.
APPENDED = {
    "SP_StreamExecutor": ("SP_STREAMEXECUTOR_STRUCT_SIZE", ["create_stream_with_options"]),
}
# Structs new in such a release (absent from older wheels' headers).
ADDED = {"SP_StreamOptions"}

# (header, language of the wheel's copy, what to compare)
HEADERS = [
    ("tensorflow/c/experimental/stream_executor/stream_executor.h", "c"),
    ("tensorflow/c/kernels.h", "c++"),
    ("tensorflow/c/tf_tensor.h", "c++"),
    ("tensorflow/c/tf_buffer.h", "c"),
    ("tensorflow/c/experimental/grappler/grappler.h", "c"),
]


def wheel_include():
    try:
        import tensorflow as tf
    except ImportError:
        return None
    inc = os.path.join(os.path.dirname(tf.__file__), "include")
    return inc if os.path.isdir(inc) else None


def _strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def _balanced(text, start):
    """Index just past the brace block that opens at text[start] == '{'."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    raise ValueError("unbalanced braces")


def parse_header(path):
    """{struct: [members]}, {enum constant names}, [macro names]."""
    text = _strip_comments(open(path).read())
    structs, enums = {}, []
    for m in re.finditer(r"typedef\s+(struct|enum)\s+(\w+)?\s*\{", text):
        end = _balanced(text, m.end() - 1)
        body = text[m.end():end - 1]
        name_m = re.match(r"\s*(\w+)\s*;", text[end:])
        name = name_m.group(1) if name_m else m.group(2)
        if m.group(1) == "enum":
            enums += [e.split("=")[0].strip() for e in body.split(",") if e.strip()]
            continue
        members = []
        for decl in body.split(";"):
            decl = " ".join(decl.split())
            if not decl or decl.startswith("#"):
                continue
            fp = re.search(r"\(\s*\*\s*(\w+)\s*\)", decl)
            if fp:
                members.append(fp.group(1))
                continue
            decl = re.sub(r"\[[^\]]*\]", "", decl)
            ident = re.findall(r"\w+", decl)
            if ident:
                members.append(ident[-1])
        structs[name] = members
    macros = re.findall(
        r"#define\s+(\w+_STRUCT_SIZE|SE_MAJOR|SE_MINOR|SE_PATCH|GO_MAJOR|GO_MINOR|GO_PATCH)\b", text)
    # kernels.h spells one size as a const, not a macro.
    macros += re.findall(r"const\s+size_t\s+(\w+_STRUCT_SIZE)\s*=", text)
    return structs, enums, sorted(set(macros))


def _program(header, structs, enums, macros):
    lines = ["#include <stddef.h>", "#include <stdio.h>", f'#include "{header}"',
             "int main(void) {"]
    for s, members in sorted(structs.items()):
        lines.append(f'  printf("sizeof {s} %zu\\n", sizeof({s}));')
        for mem in members:
            lines.append(f'  printf("offsetof {s}.{mem} %zu\\n", offsetof({s}, {mem}));')
            lines.append(f'  printf("sizeof {s}.{mem} %zu\\n", sizeof(((({s} *)0)->{mem})));')
    for e in enums:
        lines.append(f'  printf("enum {e} %ld\\n", (long)({e}));')
    for mac in macros:
        lines.append(f'  printf("value {mac} %zu\\n", (size_t)({mac}));')
    lines += ["  return 0;", "}"]
    return "\n".join(lines) + "\n"


def _compile_run(src, lang, includes, workdir, tag):
    compiler = "g++" if lang == "c++" else "cc"
    exe = shutil.which(compiler)
    if exe is None:
        pytest.skip(f"no {compiler}")
    ext = "cc" if lang == "c++" else "c"
    path = os.path.join(workdir, f"{tag}.{ext}")
    with open(path, "w") as f:
        f.write(src)
    out = os.path.join(workdir, tag)
    args = [exe, "-w", path, "-o", out] + [f"-I{i}" for i in includes]
    if lang == "c++":
        args.insert(1, "-std=c++17")
    cp = subprocess.run(args, capture_output=True, text=True)
    if cp.returncode != 0:
        return None, cp.stderr
    return subprocess.run([out], capture_output=True, text=True, check=True).stdout, None


def _wheel_includes(inc):
    # tf_status.h includes xla/tsl/c/tsl_status.h; where a wheel keeps it varies.
    extra = [inc]
    for sub in ("external/local_xla", "external/local_tsl", "third_party/xla", "external/com_google_absl"):
        if os.path.isdir(os.path.join(inc, sub)):
            extra.append(os.path.join(inc, sub))
    return extra


@pytest.mark.parametrize("header,lang", HEADERS, ids=[h[0].split("/")[-1] for h in HEADERS])
def test_layout_matches_wheel(header, lang):
    inc = wheel_include()
    if inc is None or not os.path.exists(os.path.join(inc, header)):
        pytest.skip("the TensorFlow wheel's headers are not installed")
    ours_path = os.path.join(REPO, "include", header)
    assert os.path.exists(ours_path), f"include/{header} missing"
    wheel_structs, wheel_enums, wheel_macros = parse_header(os.path.join(inc, header))
    our_structs, our_enums, our_macros = parse_header(ours_path)
    assert wheel_structs, f"parsed no struct from the wheel's {header}"

    if lang == "c++":
        # Only the structs our C header reproduces (kernels.h/tf_tensor.h
        # declare many more opaque types and C++-only things).
        wheel_structs = {s: m for s, m in wheel_structs.items() if s in our_structs}
        wheel_enums = [e for e in wheel_enums if e in our_enums]
        wheel_macros = [mac for mac in wheel_macros if mac in our_macros]
        if not wheel_structs:
            pytest.skip(f"no struct of the wheel's {header} is in ours")

    missing = sorted(set(wheel_structs) - set(our_structs))
    assert not missing, f"structs of the wheel's {header} missing from include/: {missing}"
    older = {}  # struct -> (size macro, its last member in this wheel)
    for s, members in wheel_structs.items():
        macro, appended = APPENDED.get(s, (None, []))
        if macro and our_structs[s] == members + appended:
            older[s] = (macro, members[-1])
            continue
        assert our_structs[s] == members, (
            f"{s}: members differ\n wheel: {members}\n ours:  {our_structs[s]}")
    extra = set(our_structs) - set(wheel_structs)
    if lang == "c":
        assert extra <= ADDED, f"structs in include/{header} the wheel lacks: {sorted(extra - ADDED)}"
        if extra:
            assert older, f"{sorted(extra)} without the members that use them"
    assert set(wheel_macros) <= set(our_macros), sorted(set(wheel_macros) - set(our_macros))

    with tempfile.TemporaryDirectory() as tmp:
        src = _program(header, wheel_structs, wheel_enums, wheel_macros)
        theirs, err = _compile_run(src, lang, _wheel_includes(inc), tmp, "wheel")
        if theirs is None:
            pytest.skip(f"the wheel's {header} does not compile standalone as {lang}: {err[-800:]}")
        for s, (macro, last) in older.items():
            # Ours is longer: compare the wheel's size with where its last
            # member ends in ours (the struct_size its core sends).
            src = src.replace(f'printf("sizeof {s} %zu\\n", sizeof({s}));',
                              f'printf("sizeof {s} %zu\\n", (size_t)TF_OFFSET_OF_END({s}, {last}));')
            src = src.replace(f'(size_t)({macro})', f'(size_t)(TF_OFFSET_OF_END({s}, {last}))')
        ours, err = _compile_run(src, "c", [os.path.join(REPO, "include")], tmp, "ours")
        assert ours is not None, f"include/{header} against the wheel's member list:\n{err[-3000:]}"
    diff = [f"{a}  !=  {b}" for a, b in zip(theirs.splitlines(), ours.splitlines()) if a != b]
    assert not diff, "layout differs (wheel != ours):\n" + "\n".join(diff)
    assert len(theirs.splitlines()) == len(ours.splitlines())
    print(f"{header}: {len(theirs.splitlines())} facts equal")


@pytest.mark.skipif("not has_variable_api()",
                    reason="this TensorFlow wheel exports no kernels_experimental.h "
                    "(tensorflow#126374), so no TF_AddNVariant/TF_ZerosLikeVariant: the "
                    "plugin registers no variant AddN or ZerosLike")
def test_variant_callbacks_free_each_tensor_once(tf):
    """kernels_experimental.h hands TF_AddNVariant's and TF_ZerosLikeVariant's
    callbacks tensors the plugin must delete up to 2.21; from 2.22 TensorFlow
    deletes them itself. Deleting twice crashes, never deleting keeps each
    element's buffer alive: repeat both and the device's memory in use must
    come back to where it was."""
    raw = tf.raw_ops
    x = tf.constant(np.arange(4 * 1024, dtype=np.float32).reshape(4, 1024))
    shape = tf.constant([1024], tf.int32)

    def step():
        with tf.device("/device:OPENCL:0"):
            lst = raw.TensorListFromTensor(tensor=x, element_shape=shape)
            total = raw.AddN(inputs=[lst, lst, lst])
            zeros = raw.ZerosLike(x=lst)
            out = raw.TensorListStack(input_handle=total, element_dtype=tf.float32,
                                      element_shape=shape)
            zero = raw.TensorListStack(input_handle=zeros, element_dtype=tf.float32,
                                       element_shape=shape)
        return out.numpy(), zero.numpy()

    out, zero = step()  # the first call builds the programs and pools
    np.testing.assert_array_equal(out, 3 * x.numpy())
    assert not zero.any()
    before = tf.config.experimental.get_memory_info("OPENCL:0")["current"]
    for _ in range(50):
        step()
    after = tf.config.experimental.get_memory_info("OPENCL:0")["current"]
    # Each leaked step would keep 4 * 2 element buffers of 4 KiB.
    assert after - before < 50 * 4 * 4096, (before, after)
