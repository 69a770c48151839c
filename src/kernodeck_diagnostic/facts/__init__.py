"""Facts the front collects itself, beside the worker.

The host's GPU tools (``host``) and the environment around the interpreter (``environment``).
"""
