"""The Slurm executor: each trial a task of a job array, run on a node by `worker`."""
