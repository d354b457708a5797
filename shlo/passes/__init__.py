"""Module -> Module transformations, registered under their upstream names."""
