"""The Beam pipeline (no Beam import at package import time)."""

__all__: list = []
