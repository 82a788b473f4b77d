#!/usr/bin/env python3
"""Embeds an OpenCL C source into the plugin as a C string.

usage: embed_cl.py FAMILY INPUT.cl OUTPUT.c

Local includes (#include "x.clh" next to the input) are inlined, so the
program handed to clCreateProgramWithSource is self-contained and nothing is
read from disk at run time. A header is inlined once; an X-macro table
(x.def, expanded once per row macro its includer defines) every time it is
included. The result defines
    const char ocl_cl_source_<FAMILY>[];
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$')


def inline(path, seen):
    path = os.path.normpath(path)
    if path in seen:
        return []
    if not path.endswith(".def"):
        seen.add(path)
    lines = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                lines += inline(os.path.join(os.path.dirname(path), m.group(1)), seen)
                lines.append('#line %d "%s"\n' % (lineno + 1, os.path.basename(path)))
            else:
                lines.append(line)
    return lines


def c_string(lines):
    out = []
    for line in lines:
        escaped = line.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        out.append('  "%s"' % escaped)
    return "\n".join(out) if out else '  ""'


def main():
    family, src, dst = sys.argv[1:4]
    lines = ['#line 1 "%s"\n' % os.path.basename(src)] + inline(src, set())
    with open(dst, "w", encoding="utf-8") as f:
        f.write("/* Generated from %s by embed_cl.py; do not edit. */\n" % os.path.basename(src))
        f.write("extern const char ocl_cl_source_%s[];\n" % family)
        f.write("const char ocl_cl_source_%s[] =\n%s;\n" % (family, c_string(lines)))


if __name__ == "__main__":
    main()
