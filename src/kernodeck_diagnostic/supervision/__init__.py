"""The children the front starts, and what they say.

Each is spawned in its own process group, bounded in time and killed whole by ``children``
(a base module: the facts' host tools use it too); ``supervisor`` runs the worker within the
check's limit; ``events`` decodes the worker's event log.
"""
