import sys

from triangulation.cli.main import main

sys.exit(main())
