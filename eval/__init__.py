"""Evaluation tools: ``judge-eval`` (rule reward vs judge on labelled rows), benchmarks and soaks.

Modules: ``dataset`` (reading rows), ``scoring`` (rule and judge scores), ``metrics``
(agreement, kappa, correlations), ``report`` (markdown and HTML), ``plots`` (PNG figures),
``cli`` (the ``judge-eval`` command); ``bench`` and ``soak`` measure speed and robustness.
"""

__all__: list[str] = []
