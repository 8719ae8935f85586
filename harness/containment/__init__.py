"""Keeping every actor inside its workspace: the audit hook, the sandbox a candidate runs in, watching
outside, removing trees. Imports ``harness.util`` only."""
