"""A conformance harness for the file tools that AI coding agents call."""

__version__ = "0.1.0"
