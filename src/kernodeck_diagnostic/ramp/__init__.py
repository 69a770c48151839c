"""The measured operating range (``kernodeck-diagnostic ramp``): which values of one axis to try
(``plan``), how each attempt ended (``outcome``), and the record of the ramp (``record``:
ramp.json, its markdown table, its plot). The command itself is ``commands/ramp.py``."""
