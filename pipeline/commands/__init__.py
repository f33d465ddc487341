"""The ``beambleu`` commands, one module each (``score``, ``run``, ``report``, ``convert``), and what
they share: the metrics' flags made from their declared options (``metric_options``), ``run``'s
pipeline options (``run_options``), the significance flags, sacrebleu's test sets and ``run``'s
stderr filter. A command parses, checks and formats; the stages below it do the work."""

__all__: list = []
