"""What a run leaves behind: snapshots, baselines, last-failed results, and the observations read back from them."""
