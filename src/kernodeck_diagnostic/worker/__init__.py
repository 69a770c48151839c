"""What runs inside the user's interpreter: ``stages``, the worker, and its companion modules.

They are copied to a private folder and run by path in the interpreter under diagnosis, which
lacks this package: they use the standard library and torch only, and reach one another by file
path (see ``stages``). ``protocol`` is the wire protocol both sides share (stages, events, error
kinds, bounds, expected values): the front imports it, and nothing else of the worker but
``readings.environment``, with which a Trial reads the facts of the program it runs in.
"""

# The worker's companions (``protocol.COMPANIONS``, which the worker loads in this order), named
# here too for the front, which copies them beside the worker before it has loaded ``typing``:
# the protocol's Literal names need it, and the worker's start is the check's critical path
# (supervision/start.py). tests/test_worker_boundary.py holds the two lists equal.
COMPANIONS = ("protocol", "origin", "integrity", "runtime", "readings", "accelerators",
              "all_devices", "inventory", "collective", "extensions", "kernels", "plugins")
