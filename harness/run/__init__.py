"""Running scenarios: the workspace, the runner, workers, faults and the run options."""
