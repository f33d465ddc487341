"""What ``beambleu`` reads and writes: the inputs (planning and reading Parquet, ``inputs``; text
files, ``textfiles``), the outputs (staging, the streamed sink, the commit: ``outputs``; what an
output may replace: ``ownership``) and how long to wait for a store or a cluster (``stores``)."""

__all__: list = []
