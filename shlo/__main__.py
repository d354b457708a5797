"""`python -m shlo ...` is the `shlo` command."""

import sys

from .cli import main

sys.exit(main())
