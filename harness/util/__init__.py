"""The lowest layer: caps, printable text, processes, schemas, text diffs, bounded file I/O; imports nothing of the harness."""
