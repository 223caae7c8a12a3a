"""Testbed: hosts, services and runs of single experiment points."""
