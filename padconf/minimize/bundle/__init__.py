"""The bundle: its files, REPORT.md, title, INDEX.md and the scripts it carries."""
