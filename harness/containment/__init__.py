"""Keeping every actor inside its workspace: the audit hook, watching outside, removing trees. Imports
``harness.util`` only."""
