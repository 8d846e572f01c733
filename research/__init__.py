"""Research out of the installed package: training, experiments and exports (research/README.md)."""
