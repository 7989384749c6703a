"""The message census (KB-editing data, see README.md); installed only for ``operands.yaml``, which the matcher reads."""
