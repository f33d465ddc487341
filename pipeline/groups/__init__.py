"""Accumulators and group tables, Beam-free: one accumulator (``accumulate``), the group tables of a
grouping set and their exact merge (``grouptable``), the score stage's results as JSON objects and
group-table rows (``results``) and the shape of those objects (``document``)."""

__all__: list = []
