"""The children the front starts, and what they say.

``process`` spawns each in its own process group, bounds it in time and kills it whole;
``supervisor`` runs the worker within the check's limit; ``events`` decodes the worker's event log.
"""
