"""The trial where training loops already live: one adapter per framework (docs/trial.md).

- ``adapters.lightning.KernodeckCallback``: a PyTorch Lightning ``Callback``;
- ``adapters.transformers.KernodeckTrainerCallback``: a ``transformers.TrainerCallback``;
- ``adapters.accelerate.trial_for``: a ``Trial`` for one process of an ``accelerate launch``.

Each module imports its framework when it is imported itself, never before: the package keeps no
dependency. ``attempt.TrainingAttempt`` is what the callbacks share: a ``Trial`` driven by a
framework's events instead of ``with`` blocks.
"""
