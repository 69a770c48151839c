"""Objects a forked child must know to be copies: an open file, an attempt, a recorder of the
parent's. ``copies_told("forked")`` is a set of weak references; in a child forked while a
member lives, each member's ``forked()`` is called, from the thread that forked, before
``os.fork`` returns there (POSIX; elsewhere nothing forks and nothing is called).

Standard library only: this runs inside the user's program.
"""

from __future__ import annotations

import operator
import os
import weakref
from typing import Any


def copies_told(method: str) -> weakref.WeakSet[Any]:
    """A new set whose members each have ``method`` called, with no argument, in a child forked
    while they are members (see the module's docstring). Hooks run in the order their sets were
    made, so a module made earlier tells its members first."""
    members: weakref.WeakSet[Any] = weakref.WeakSet()
    call = operator.methodcaller(method)

    def after_in_child() -> None:
        for member in list(members):
            call(member)

    if hasattr(os, "register_at_fork"):  # POSIX
        os.register_at_fork(after_in_child=after_in_child)
    return members
