"""Reproducible speed and memory measurements, printed as ratios against sacrebleu."""
