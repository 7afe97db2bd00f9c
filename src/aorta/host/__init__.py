"""This host as a run sees it: the environment snapshot (`snapshot`, with GPU health and the
software stack) and the process table (`proc_table`)."""
