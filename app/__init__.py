"""Companion: a desktop VTuber voice companion."""

__version__ = "0.1.0"
