"""What runs inside the user's interpreter: ``stages``, one self-contained file.

It is copied to a private folder and run by path in the interpreter under diagnosis, which lacks
this package: it uses the standard library and torch only, and imports none of its siblings.
The front imports it for the protocol it owns (stages, expected values, bounds).
"""
