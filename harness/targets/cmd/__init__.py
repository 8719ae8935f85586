"""The ``cmd:`` target: a candidate program that speaks line-JSON, optionally sandboxed."""
