"""The built-in metrics, one folder each (``bleu``, ``chrf``, ``ter``).

A folder holds its metric's class and declared options (``metric.py``), its score arithmetic
(``score.py``), its readable one-pair path (``reference.py``), its Arrow-to-kernel binding
(``kernel.py``), the arithmetic of sacrebleu's resampling on its statistics (``resampling.py``) and
its C kernel (``_<id>.c``). :mod:`bleu_core.registry` lists them; nothing else names one."""

__all__: list = []
