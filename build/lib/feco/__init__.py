"""feco."""
