"""The commands that read saved reports: ``compare`` and ``summarize``, and what they share."""
