import sys

from subguard.cli import main

sys.exit(main())
