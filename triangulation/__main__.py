import sys

from triangulation.cli import main

sys.exit(main())
