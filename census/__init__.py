"""The message census (KB-editing data, see README.md); installed only for ``operands.json`` (generated from ``operands.yaml``), which the matcher reads."""
