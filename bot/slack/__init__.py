"""Parley in Slack: intake, workers, live progress and answers."""
