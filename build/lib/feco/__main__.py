"""`python -m feco` is the `feco` command."""

import sys

from feco.cli import main

sys.exit(main())
