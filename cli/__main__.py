"""``python -m dtypefix.cli``."""

from .console import run

run()
