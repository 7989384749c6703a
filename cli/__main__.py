"""``python -m dtypefix.cli``."""

from .app import run

run()
