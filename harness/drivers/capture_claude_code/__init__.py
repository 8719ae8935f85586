"""Captures the claude-code target's observations (``python -m harness.drivers.capture_claude_code``) and
writes the findings report from them (``findings.py``)."""
