"""Run by `tfocl.pth` at interpreter start-up (and by `import tfocl`).

Installs tfocl's import hook and nothing else: no TensorFlow or Keras import,
so every Python process of the environment pays a few imports of the
standard library at most. Never raises: a failing .pth line would print a
traceback at every start-up.
"""
try:
    from tfocl import _hook

    _hook.install()
except Exception as e:  # noqa: BLE001 -- start-up must go on whatever happens
    import sys

    sys.stderr.write("tfocl: the TensorFlow/Keras compatibility hook is not installed "
                     f"({type(e).__name__}: {e})\n")
