"""``python -m padconf.cli``: the ``padconf`` command."""
import sys

from padconf.cli import main

sys.exit(main())
