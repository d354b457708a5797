"""Shared by every test: ``tests/`` on ``sys.path`` (this file lives here, and pytest puts the
directory of a rootless conftest on the path), so that test modules import the op-test harness
(tests/harness.py) and the numpy reference of the kernels (tests/reference.py) by name."""
