"""dtypefix command line."""
