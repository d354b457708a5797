"""The opset, grouped as the spec groups it; each op is defined once (see registry.py)."""
