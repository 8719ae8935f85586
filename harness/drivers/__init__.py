"""Whole-run tools above the runner: benchmarks, capture drivers, fuzzing, discovery."""
