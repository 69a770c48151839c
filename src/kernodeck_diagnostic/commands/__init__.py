"""The commands: ``check`` (the default), ``compare`` and ``summarize``, each ``main(argv) -> int``
on ``runner``, which makes them end alike; ``tables`` lays out what the report readers show."""
