"""For the child processes of the tfocl suites and benchmarks (conftest.py
and tests/bench/build_tree.py put this folder on PYTHONPATH when the plugin
comes from the build tree): activates the source tree's tfocl package as
its installed tfocl.pth would, by processing plugin/python as a site
directory."""
import os
import site

site.addsitedir(os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))),
    "plugin", "python"))
