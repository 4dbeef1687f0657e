"""The judge (docs/reach-model.md): each finding's disposition from its rule's class and its line's reach, read
from one table (auditor/judge/table.py)."""
