"""What ``beambleu`` reads and writes: the inputs (planning and reading, ``inputs``; what an
``--input`` names, directories and Hive partitions, ``listing``; JSON Lines, CSV and TSV,
``formats``; their one-line errors, ``input_errors``; ``sacrebleu``-style text files,
``textfiles``), the per-pair filter (``keep``), the outputs (staging, the streamed sink, the commit: ``outputs``; what an
output may replace: ``ownership``) and how long to wait for a store or a cluster (``stores``)."""

__all__: list = []
