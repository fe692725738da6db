"""One module per speech recognizer."""
