"""buying groups."""
