"""Figures, tables and number macros for the report's generated sections."""
